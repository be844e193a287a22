package node

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// The images a node has (built by BuildImages, imported at Start). No
// image can be pulled here: every one is a static Go binary FROM
// scratch, its source and Dockerfile in test/node/images/<name>.
const (
	// PauseImage holds each Pod's namespaces (containerd's sandbox_image).
	PauseImage = "kinject.test/pause:1"
	// AppImage is the tests' workload (images/app).
	AppImage = "kinject.test/app:1"
	// ProxyImage stands in for Envoy (images/proxy); ProxyImageNext is
	// the same program as another image (its own digest, which the
	// container statuses then report), an upgrade for restarts to roll.
	ProxyImage     = "kinject.test/proxy:1"
	ProxyImageNext = "kinject.test/proxy:2"
	// ProxyImageBroken is the stand-in built to exit 1 at once: a
	// release that never becomes ready.
	ProxyImageBroken = "kinject.test/proxy:broken"
)

// buildArgs are the docker build arguments of a tag (none for most).
var buildArgs = map[string][]string{
	ProxyImageBroken: {"--build-arg", "BROKEN=this release exits at start"},
}

// images maps each image directory to its tags.
var images = []struct {
	name string
	tags []string
}{
	{"pause", []string{PauseImage}},
	{"app", []string{AppImage}},
	{"proxy", []string{ProxyImage, ProxyImageNext, ProxyImageBroken}},
}

// Tags lists every image tag a node has.
func Tags() []string {
	var out []string
	for _, im := range images {
		out = append(out, im.tags...)
	}
	return out
}

// BuildImages builds the images with Docker: each binary statically,
// beside its Dockerfile in a temporary build context.
func BuildImages(ctx context.Context) error {
	root := filepath.Join(testbin.ModuleRoot(), "test", "node", "images")
	for _, im := range images {
		dir, err := os.MkdirTemp("", "kinject-image-")
		if err != nil {
			return fmt.Errorf("create build context of image %s: %w", im.name, err)
		}
		err = buildImage(ctx, filepath.Join(root, im.name), dir, im.name, im.tags)
		os.RemoveAll(dir)
		if err != nil {
			return err
		}
	}
	return nil
}

func buildImage(ctx context.Context, src, dir, name string, tags []string) error {
	if err := testbin.Build(filepath.Join(dir, name), "./test/node/images/"+name); err != nil {
		return fmt.Errorf("build image %s: %w", name, err)
	}
	dockerfile, err := os.ReadFile(filepath.Join(src, "Dockerfile"))
	if err != nil {
		return fmt.Errorf("build image %s: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), dockerfile, 0o644); err != nil {
		return fmt.Errorf("build image %s: %w", name, err)
	}
	// One image per tag: the label makes each its own image, and the
	// layers are shared.
	for _, tag := range tags {
		args := append([]string{"build", "--quiet", "--tag", tag, "--label", "dev.kinject.test/tag=" + tag}, buildArgs[tag]...)
		cmd := exec.CommandContext(ctx, "docker", append(args, dir)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("docker build image %s: %w: %s", tag, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// importImages copies the images from Docker into containerd's CRI
// namespace: docker save | ctr images import.
func (c *containerd) importImages(ctx context.Context) error {
	save := exec.CommandContext(ctx, "docker", append([]string{"save"}, Tags()...)...)
	load := exec.CommandContext(ctx, "ctr", "--address", c.socket, "--namespace", containerdNamespace, "images", "import", "-")
	pr, pw := io.Pipe()
	save.Stdout = pw
	load.Stdin = pr
	var saveErr, loadOut strings.Builder
	save.Stderr = &saveErr
	load.Stdout, load.Stderr = &loadOut, &loadOut
	if err := load.Start(); err != nil {
		return fmt.Errorf("import images: %w", err)
	}
	err := save.Run()
	pw.CloseWithError(err)
	if err != nil {
		_ = load.Wait()
		return fmt.Errorf("docker save %s: %w: %s", strings.Join(Tags(), " "), err, saveErr.String())
	}
	if err := load.Wait(); err != nil {
		return fmt.Errorf("ctr images import: %w: %s", err, loadOut.String())
	}
	return nil
}
