package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/mddoc"
	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/test/cluster"
)

// The pinned copies of Argo CD's own objects (see their header comments).
var (
	argoRepoServer = filepath.Join(example("argocd"), "testdata", "argocd-repo-server.yaml")
	argoCM         = filepath.Join(example("argocd"), "testdata", "argocd-cm.yaml")
)

// TestArgoCDRepoServer tests examples/argocd/repo-server-patch.yaml on Argo
// CD's real repo-server Deployment (v3.6.1, pinned under testdata):
// kubectl patch --local applies it, its init container runs in Docker with
// the inject-fn image built from this tree, as the kubelet would run it,
// against a directory that stands for the emptyDir; then the
// repo-server's kustomize build, with argocd-cm.yaml's build options, finds
// inject-fn where the repo-server's mount puts it and renders the example
// app as expected.yaml says.
func TestArgoCDRepoServer(t *testing.T) {
	kubectl := need(t, "kubectl")
	cmd := exec.Command(kubectl, "patch", "--local", "-f", argoRepoServer, "--type", "strategic",
		"--patch-file", filepath.Join(example("argocd"), "repo-server-patch.yaml"), "-o", "yaml")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl patch --local: %v\n%s", err, stderrOf(err))
	}
	var d appsv1.Deployment
	if err := sigsyaml.Unmarshal(out, &d); err != nil {
		t.Fatal(err)
	}
	checkRepoServer(t, &d, buildOptions(t, filepath.Join(example("argocd"), "argocd-cm.yaml")))
}

// TestArgoCDDoc runs the Argo CD commands of docs/gitops.md verbatim against an
// API server holding Argo CD's own argocd-cm and repo-server Deployment,
// then checks what the server stored as TestArgoCDRepoServer does: every
// key of argocd-cm survives the patch, and the stored Deployment's init
// container and kustomize build work.
func TestArgoCDDoc(t *testing.T) {
	kubectl := need(t, "kubectl")
	block := mddoc.ShBlock(t, "docs/gitops.md", "## Argo CD")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx)
	if errors.Is(err, cluster.ErrMissingBinaries) {
		testbin.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	env := []string{"KUBECONFIG=" + c.AdminKubeconfig, "KUBECACHEDIR=" + t.TempDir()}
	kc := func(args ...string) string {
		t.Helper()
		r := runEnv(t, repoRoot, env, kubectl, args...)
		if r.code != 0 {
			t.Fatalf("kubectl %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r.stdout
	}
	kc("create", "namespace", "argocd")
	kc("-n", "argocd", "create", "-f", argoCM, "-f", argoRepoServer)

	r := runEnv(t, repoRoot, env, "sh", "-ex", "-c", block)
	if r.code != 0 {
		t.Fatalf("docs/gitops.md's Argo CD commands: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	var before, after corev1.ConfigMap
	b, err := os.ReadFile(argoCM)
	if err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.Unmarshal(b, &before); err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.Unmarshal([]byte(kc("-n", "argocd", "get", "configmap", "argocd-cm", "-o", "yaml")), &after); err != nil {
		t.Fatal(err)
	}
	for k, v := range before.Data {
		if after.Data[k] != v {
			t.Errorf("argocd-cm lost or changed %s", k)
		}
	}
	var d appsv1.Deployment
	if err := sigsyaml.Unmarshal([]byte(kc("-n", "argocd", "get", "deployment", "argocd-repo-server", "-o", "yaml")), &d); err != nil {
		t.Fatal(err)
	}
	checkRepoServer(t, &d, strings.Fields(after.Data["kustomize.buildOptions"]))
}

// checkRepoServer runs the patched repo-server's inject-fn init container
// in Docker, then the repo-server's kustomize build with the binary it
// left, and compares the build with examples/argocd/expected.yaml.
func checkRepoServer(t *testing.T, d *appsv1.Deployment, options []string) {
	t.Helper()
	if len(options) == 0 {
		t.Fatal("no kustomize.buildOptions")
	}
	docker := need(t, "docker")
	kustomize := need(t, "kustomize")
	image(t)
	spec := d.Spec.Template.Spec
	i := slices.IndexFunc(spec.InitContainers, func(c corev1.Container) bool { return c.Name == "inject-fn" })
	if i < 0 {
		t.Fatalf("no inject-fn init container in %v", spec.InitContainers)
	}
	init := spec.InitContainers[i]
	if len(init.VolumeMounts) != 1 {
		t.Fatalf("the init container mounts %v, want one volume", init.VolumeMounts)
	}
	volume := init.VolumeMounts[0]
	if v := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == volume.Name }); v < 0 || spec.Volumes[v].EmptyDir == nil {
		t.Fatalf("volume %s is not an emptyDir of the pod", volume.Name)
	}
	// The repo-server's mount of the same volume puts the binary on its PATH.
	repo := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == "argocd-repo-server" })
	if repo < 0 {
		t.Fatal("no argocd-repo-server container")
	}
	// inject-fn, named as inject.yaml's exec path, and kinject-cel beside
	// it, both on its PATH.
	var mounts []corev1.VolumeMount
	for _, m := range spec.Containers[repo].VolumeMounts {
		if m.Name == volume.Name {
			mounts = append(mounts, m)
		}
	}
	var paths []string
	for _, m := range mounts {
		paths = append(paths, m.MountPath)
		if path.Base(m.MountPath) != m.SubPath {
			t.Errorf("the repo-server mounts %s at %s: want it under its own name", m.SubPath, m.MountPath)
		}
	}
	if want := []string{"/usr/local/bin/inject-fn", "/usr/local/bin/kinject-cel"}; !slices.Equal(paths, want) {
		t.Fatalf("the repo-server mounts %s at %v, want %v", volume.Name, paths, want)
	}

	// The built image stands for the image the patch names, which no test
	// may pull.
	if r := run(t, "", docker, "tag", Image, init.Image); r.code != 0 {
		t.Fatalf("docker tag %s: %s", init.Image, r.stderr)
	}
	t.Cleanup(func() { _ = exec.Command(docker, "rmi", init.Image).Run() })
	// An emptyDir is a directory every container of the pod may write to.
	emptyDir := t.TempDir()
	if err := os.Chmod(emptyDir, 0o777); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--rm", "--network", "none", "-v", emptyDir + ":" + volume.MountPath}
	args = append(args, securityOptions(t, init.SecurityContext, init.Image)...)
	if len(init.Command) > 0 {
		args = append(args, "--entrypoint", init.Command[0])
	}
	args = append(args, init.Image)
	if len(init.Command) > 1 {
		args = append(args, init.Command[1:]...)
	}
	args = append(args, init.Args...)
	r := run(t, "", docker, args...)
	if r.code != 0 {
		t.Fatalf("the init container: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("the init container: %s", strings.TrimSpace(r.stdout))

	// The repo-server's file system: the mount's subPath of the volume at
	// the mount path, and nothing else of ours on PATH.
	bin := t.TempDir()
	for _, mount := range mounts {
		copied, err := os.ReadFile(filepath.Join(emptyDir, mount.SubPath))
		if err != nil {
			t.Fatalf("the init container left no %s in the volume: %v", mount.SubPath, err)
		}
		if err := os.WriteFile(filepath.Join(bin, path.Base(mount.MountPath)), copied, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(filepath.Join(bin, testbin.Helper), "--version").Output(); err != nil || !strings.HasPrefix(string(out), testbin.Helper+" ") {
		t.Errorf("the copied %s does not run: %v %q", testbin.Helper, err, out)
	}
	cmd := exec.Command(kustomize, append([]string{"build", "app"}, options...)...)
	cmd.Dir = example("argocd")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+withoutDir(os.Getenv("PATH"), injectFn(t)))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build app %s: %v\n%s", strings.Join(options, " "), err, stderrOf(err))
	}
	want, err := os.ReadFile(filepath.Join(example("argocd"), "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(want) {
		t.Errorf("the repo-server's build differs from examples/argocd/expected.yaml:\n%s", out)
	}
}

// securityOptions turns a container's securityContext into docker run
// options, and checks that image satisfies runAsNonRoot as the kubelet
// would: a numeric, non-zero user.
func securityOptions(t *testing.T, sc *corev1.SecurityContext, image string) []string {
	t.Helper()
	if sc == nil {
		return nil
	}
	var opts []string
	if sc.RunAsUser != nil {
		opts = append(opts, "--user", strconv.FormatInt(*sc.RunAsUser, 10))
	}
	if sc.RunAsNonRoot != nil && *sc.RunAsNonRoot && sc.RunAsUser == nil {
		user := strings.TrimSpace(mustRun(t, "", need(t, "docker"), "image", "inspect", "-f", "{{.Config.User}}", image))
		uid, _, _ := strings.Cut(user, ":")
		if uid == "" || uid == "0" || strings.Trim(uid, "0123456789") != "" {
			t.Errorf("runAsNonRoot: the image's user %q is not a numeric non-root user; the kubelet would refuse to start it", user)
		}
	}
	if sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem {
		opts = append(opts, "--read-only")
	}
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		opts = append(opts, "--security-opt", "no-new-privileges")
	}
	if sc.Capabilities != nil {
		for _, c := range sc.Capabilities.Drop {
			opts = append(opts, "--cap-drop", string(c))
		}
	}
	return opts
}

// buildOptions reads kustomize.buildOptions from an argocd-cm file.
func buildOptions(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := sigsyaml.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	return strings.Fields(cm.Data["kustomize.buildOptions"])
}

// withoutDir removes dir from a PATH list.
func withoutDir(list, dir string) string {
	var keep []string
	for _, d := range filepath.SplitList(list) {
		if d != dir {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

func stderrOf(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return ""
}
