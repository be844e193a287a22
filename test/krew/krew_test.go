package krew

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

const (
	testVersion = "v0.0.0-krewtest"
	testCommit  = "0123abc"
	// archiveTime is hack/dist's fixed modification time of archive entries.
	wantModTime = "2024-01-01T00:00:00Z"
)

var (
	host    = runtime.GOOS + "/" + runtime.GOARCH
	windows = "windows/amd64"
)

// repoRoot is the module root (two levels up from test/krew).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	return root
}

var (
	toolOnce sync.Once
	toolBin  string
	toolErr  error
	toolDir  string
)

// distTool builds hack/dist once per test binary and returns its path.
func distTool(t *testing.T) string {
	t.Helper()
	toolOnce.Do(func() {
		toolDir, toolErr = os.MkdirTemp("", "kinject-krewtest-")
		if toolErr != nil {
			return
		}
		toolBin = filepath.Join(toolDir, "dist"+exeSuffix())
		cmd := exec.Command("go", "build", "-o", toolBin, "./hack/dist")
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			toolErr = fmt.Errorf("go build ./hack/dist: %v\n%s", err, out)
		}
	})
	if toolErr != nil {
		t.Fatal(toolErr)
	}
	return toolBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if toolDir != "" {
		os.RemoveAll(toolDir)
	}
	if distDir != "" {
		os.RemoveAll(distDir)
	}
	os.Exit(code)
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// runDist runs the dist tool in the module root.
func runDist(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(distTool(t), args...)
	cmd.Dir = repoRoot(t)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dist %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("dist %s (%s):\n%s", strings.Join(args, " "), time.Since(start).Round(time.Second), out)
}

var (
	distOnce sync.Once
	distDir  string
	distOK   bool
)

// platforms built by the shared dist run: the host and windows/amd64.
func platforms() []string {
	if host == windows {
		return []string{windows}
	}
	return []string{host, windows}
}

// dist runs hack/dist once for platforms(), into a shared directory holding
// the artifacts and krew.yaml, the manifest rendered for them.
func dist(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the cross build")
	}
	distOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kinject-dist-")
		if err != nil {
			t.Fatal(err)
		}
		distDir = dir
		runDist(t, "-version", testVersion, "-commit", testCommit, "-out", dir,
			"-platforms", strings.Join(platforms(), ","))
		distOK = true
	})
	if !distOK {
		t.Fatal("the shared dist build failed (see the first failing test)")
	}
	return distDir
}

func archiveName(version, platform string) string {
	goos, goarch, _ := strings.Cut(platform, "/")
	ext := ".tar.gz"
	if goos == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("kubectl-inject_%s_%s_%s%s", version, goos, goarch, ext)
}

// helmArchiveName is the Helm 4 plugin archive: a .tgz on every platform,
// named so that Helm installs it into kubectl-inject/.
func helmArchiveName(version, platform string) string {
	goos, goarch, _ := strings.Cut(platform, "/")
	return fmt.Sprintf("kubectl-inject-%s-helm-plugin-%s-%s.tgz", strings.TrimPrefix(version, "v"), goos, goarch)
}

func fnName(version, platform string) string { return rawBinaryName("inject-fn", version, platform) }

// helperName is the raw binary of kinject-cel, installed beside inject-fn's.
func helperName(version, platform string) string {
	return rawBinaryName("kinject-cel", version, platform)
}

func rawBinaryName(binary, version, platform string) string {
	goos, goarch, _ := strings.Cut(platform, "/")
	name := fmt.Sprintf("%s_%s_%s_%s", binary, version, goos, goarch)
	if goos == "windows" {
		name += ".exe"
	}
	return name
}

// tool finds a test tool (see testbin.NeedTool).
func tool(t *testing.T, name string) string {
	t.Helper()
	return testbin.NeedTool(t, name)
}

func readChecksums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 || strings.ContainsAny(name, "/\\") {
			t.Fatalf("%s: line %q is not `sha256sum` format", path, sc.Text())
		}
		sums[name] = sum
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sums
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestTemplateRenders: krew.yaml is a template (no checksums of its own
// to go stale); rendered for archives of every platform of the release,
// it passes krew's validator and names each archive with its sha256.
func TestTemplateRenders(t *testing.T) {
	validate := tool(t, "validate-krew-manifest")
	dir := t.TempDir()
	var sums strings.Builder
	all := []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}
	fake := func(p string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(p))) }
	for _, p := range all {
		fmt.Fprintf(&sums, "%s  %s\n", fake(p), archiveName("v9.9.9", p))
	}
	if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	runDist(t, "-skip-build", "-version", "v9.9.9", "-out", dir)
	manifest, err := os.ReadFile(filepath.Join(dir, "krew.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		want := fmt.Sprintf("uri: https://github.com/kinject/kubectl-inject/releases/download/v9.9.9/%s\n    sha256: %s\n", archiveName("v9.9.9", p), fake(p))
		if !bytes.Contains(manifest, []byte(want)) {
			t.Errorf("the manifest lacks %q", want)
		}
	}
	for _, s := range []string{"\n  name: inject\n", "\n  version: v9.9.9\n", "bin: kubectl-inject.exe\n", "bin: kubectl-inject\n", "- from: kinject-live\n", "- from: kinject-cel\n"} {
		if !bytes.Contains(manifest, []byte(s)) {
			t.Errorf("the manifest does not contain %q", s)
		}
	}
	template, err := os.ReadFile(filepath.Join(repoRoot(t), "krew.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(template, []byte("sha256: ")) {
		t.Error("krew.yaml holds sha256 values of its own; they match no archive make dist builds")
	}
	runValidate(t, validate, filepath.Join(dir, "krew.yaml"))
}

// runValidate runs krew's validator on a copy of manifest named
// inject.yaml, the name it wants.
func runValidate(t *testing.T, validate, manifest string) {
	t.Helper()
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(t.TempDir(), "inject.yaml")
	if err := os.WriteFile(named, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(validate, "-manifest", named, "-skip-install").CombinedOutput()
	if err != nil {
		t.Fatalf("validate-krew-manifest %s: %v\n%s", manifest, err, out)
	}
	t.Logf("validate-krew-manifest:\n%s", out)
}

// TestDistArtifacts: the expected files, checksums that verify, archives
// holding exactly LICENSE and the binary with fixed metadata.
func TestDistArtifacts(t *testing.T) {
	dir := dist(t)
	license, err := os.ReadFile(filepath.Join(repoRoot(t), "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	sums := readChecksums(t, filepath.Join(dir, "checksums.txt"))
	var want []string
	for _, p := range platforms() {
		want = append(want, archiveName(testVersion, p), helmArchiveName(testVersion, p), fnName(testVersion, p), helperName(testVersion, p))
	}
	if _, err := os.Stat(filepath.Join(dir, "krew.yaml")); err != nil {
		t.Errorf("no krew manifest for the archives: %v", err)
	}
	var got []string
	for n := range sums {
		got = append(got, n)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("checksums.txt lists %v, want %v", got, want)
	}
	for name, sum := range sums {
		if s := fileSHA256(t, filepath.Join(dir, name)); s != sum {
			t.Errorf("%s: sha256 %s, checksums.txt says %s", name, s, sum)
		}
	}
	// Same check with the real sha256sum -c, where there is one.
	if sha, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command(sha, "-c", "checksums.txt")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum -c checksums.txt: %v\n%s", err, out)
		}
	}

	for _, p := range platforms() {
		t.Run(strings.ReplaceAll(p, "/", "_"), func(t *testing.T) {
			goos, _, _ := strings.Cut(p, "/")
			path := filepath.Join(dir, archiveName(testVersion, p))
			var entries []archiveEntry
			if goos == "windows" {
				entries = readZip(t, path)
			} else {
				entries = readTarGz(t, path)
			}
			exe := ""
			if goos == "windows" {
				exe = ".exe"
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.name)
			}
			want := []string{"LICENSE", "kubectl-inject" + exe, "kinject-live" + exe, "kinject-cel" + exe}
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Fatalf("%s holds %v, want %v (sorted)", path, names, want)
			}
			for _, e := range entries {
				if e.modTime.UTC().Format(time.RFC3339) != wantModTime {
					t.Errorf("%s: %s has mtime %s, want the fixed %s", path, e.name, e.modTime.UTC(), wantModTime)
				}
			}
			if !bytes.Equal(entries[0].data, license) {
				t.Errorf("%s: LICENSE differs from the repository's", path)
			}
			if entries[0].mode != 0o644 {
				t.Errorf("%s: LICENSE has mode %o, want 644", path, entries[0].mode)
			}
			for _, e := range entries[1:] {
				if e.mode != 0o755 {
					t.Errorf("%s: %s has mode %o, want 755", path, e.name, e.mode)
				}
				checkExecutable(t, goos, e.data, path+":"+e.name)
			}
			for _, name := range []string{fnName(testVersion, p), helperName(testVersion, p)} {
				raw, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				checkExecutable(t, goos, raw, name)
			}
			// The raw kinject-cel is the archives' own.
			if raw, _ := os.ReadFile(filepath.Join(dir, helperName(testVersion, p))); !bytes.Equal(raw, entries[1].data) || entries[1].name != "kinject-cel"+exe {
				t.Errorf("%s differs from %s in %s", helperName(testVersion, p), entries[1].name, path)
			}

			// The Helm plugin: the same binaries and license under
			// kubectl-inject/, with plugin.yaml (test/helm installs it).
			helm := filepath.Join(dir, helmArchiveName(testVersion, p))
			plugin := readTarGz(t, helm)
			names = nil
			for _, e := range plugin {
				names = append(names, e.name)
			}
			want = []string{"kubectl-inject/LICENSE", "kubectl-inject/kinject-cel" + exe, "kubectl-inject/kinject-live" + exe, "kubectl-inject/kubectl-inject" + exe, "kubectl-inject/plugin.yaml"}
			if !slices.Equal(names, want) {
				t.Fatalf("%s holds %v, want %v (sorted)", helm, names, want)
			}
			for i, e := range plugin {
				if e.modTime.UTC().Format(time.RFC3339) != wantModTime {
					t.Errorf("%s: %s has mtime %s, want the fixed %s", helm, e.name, e.modTime.UTC(), wantModTime)
				}
				if i < len(entries) && !bytes.Equal(e.data, entries[i].data) {
					t.Errorf("%s: %s differs from %s in %s", helm, e.name, entries[i].name, path)
				}
			}
			var yaml string
			for _, e := range plugin {
				if e.name == "kubectl-inject/plugin.yaml" {
					yaml = string(e.data)
				}
			}
			for _, s := range []string{"\nname: kubectl-inject\n", "\nversion: " + strings.TrimPrefix(testVersion, "v") + "\n", "- command: ${HELM_PLUGIN_DIR}/kubectl-inject" + exe + "\n"} {
				if !strings.Contains(yaml, s) {
					t.Errorf("%s: plugin.yaml lacks %q:\n%s", helm, s, yaml)
				}
			}
		})
	}

	// The host's inject-fn reports the version and commit it was built with.
	out, err := exec.Command(filepath.Join(dir, fnName(testVersion, host)), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("inject-fn --version: %v\n%s", err, out)
	}
	if want := testVersion + " (" + testCommit + ")"; !strings.Contains(string(out), want) {
		t.Errorf("inject-fn --version printed %q, want it to contain %q", out, want)
	}
}

// checkExecutable checks the binary format magic for the target OS.
func checkExecutable(t *testing.T, goos string, b []byte, what string) {
	t.Helper()
	var magic []byte
	switch goos {
	case "windows":
		magic = []byte("MZ")
	case "linux":
		magic = []byte("\x7fELF")
	case "darwin":
		magic = []byte{0xcf, 0xfa, 0xed, 0xfe} // Mach-O 64-bit, little endian
	}
	if !bytes.HasPrefix(b, magic) {
		t.Errorf("%s is not a %s executable (starts with %q)", what, goos, b[:min(4, len(b))])
	}
}

type archiveEntry struct {
	name    string
	mode    int64
	modTime time.Time
	data    []byte
}

func readTarGz(t *testing.T, path string) []archiveEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s is not gzip: %v", path, err)
	}
	if !gz.ModTime.IsZero() || gz.Name != "" {
		t.Errorf("%s: gzip header has name %q / mtime %s, want none", path, gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	var es []archiveEntry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag != tar.TypeReg || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: %s: type %c uid %d gid %d uname %q gname %q, want a regular file owned by 0:0", path, h.Name, h.Typeflag, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, archiveEntry{h.Name, h.Mode, h.ModTime, b})
	}
	return es
}

func readZip(t *testing.T, path string) []archiveEntry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("PK\x03\x04")) {
		t.Fatalf("%s is not a zip", path)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var es []archiveEntry
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %s: %v", path, f.Name, err)
		}
		es = append(es, archiveEntry{f.Name, int64(f.Mode().Perm()), f.Modified, data})
	}
	return es
}

// TestDistReproducible: building the host platform again gives the same bytes.
func TestDistReproducible(t *testing.T) {
	dir := dist(t)
	again := t.TempDir()
	runDist(t, "-version", testVersion, "-commit", testCommit, "-out", again, "-platforms", host)
	first := readChecksums(t, filepath.Join(dir, "checksums.txt"))
	second := readChecksums(t, filepath.Join(again, "checksums.txt"))
	for _, name := range []string{archiveName(testVersion, host), helmArchiveName(testVersion, host), fnName(testVersion, host), helperName(testVersion, host)} {
		if first[name] == "" || first[name] != second[name] {
			t.Errorf("%s is not reproducible: sha256 %s then %s", name, first[name], second[name])
		}
	}
}

// TestKrewInstall: the rendered manifest validates, krew installs the host
// archive into a temporary KREW_ROOT, and kubectl finds the plugin; krew also
// extracts the windows zip (KREW_OS=windows).
func TestKrewInstall(t *testing.T) {
	dir := dist(t)
	validate := tool(t, "validate-krew-manifest")
	krew := tool(t, "krew")
	kubectl := tool(t, "kubectl")
	manifest := filepath.Join(dir, "krew.yaml")
	runValidate(t, validate, manifest)

	m, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range platforms() {
		a := archiveName(testVersion, p)
		sum := fileSHA256(t, filepath.Join(dir, a))
		want := "uri: https://github.com/kinject/kubectl-inject/releases/download/" + testVersion + "/" + a + "\n    sha256: " + sum + "\n"
		if !bytes.Contains(m, []byte(want)) {
			t.Errorf("rendered manifest lacks %q:\n%s", want, m)
		}
	}

	krewInstall := func(t *testing.T, platform string) (krewRoot string) {
		t.Helper()
		krewRoot = t.TempDir()
		goos, goarch, _ := strings.Cut(platform, "/")
		cmd := exec.Command(krew, "install", "--manifest="+manifest, "--archive="+filepath.Join(dir, archiveName(testVersion, platform)))
		cmd.Env = append(os.Environ(),
			"HOME="+t.TempDir(), "USERPROFILE="+t.TempDir(),
			"KREW_ROOT="+krewRoot, "KREW_NO_UPGRADE_CHECK=1",
			"KREW_OS="+goos, "KREW_ARCH="+goarch)
		cmd.Stdin = nil
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("krew install (%s): %v\n%s", platform, err, out)
		}
		t.Logf("krew install (%s):\n%s", platform, out)
		return krewRoot
	}

	t.Run("host", func(t *testing.T) {
		krewRoot := krewInstall(t, host)
		store := filepath.Join(krewRoot, "store", "inject", testVersion)
		for _, f := range []string{"LICENSE", "kubectl-inject" + exeSuffix(), "kinject-live" + exeSuffix(), "kinject-cel" + exeSuffix()} {
			if _, err := os.Stat(filepath.Join(store, f)); err != nil {
				t.Errorf("krew did not install %s: %v", f, err)
			}
		}
		// kubectl's plugin discovery: kubectl-inject on PATH becomes `kubectl inject`.
		cmd := exec.Command(kubectl, "inject", "--version")
		cmd.Env = append(os.Environ(),
			"PATH="+filepath.Join(krewRoot, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
			"HOME="+t.TempDir(), "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl inject --version: %v\n%s", err, out)
		}
		if want := "kubectl-inject " + testVersion + " (" + testCommit + ")"; !strings.Contains(string(out), want) {
			t.Errorf("kubectl inject --version printed %q, want it to contain %q", out, want)
		}
		t.Logf("kubectl inject --version: %s", bytes.TrimSpace(out))
		// --version is served by kinject-live, found beside the link's
		// target; --local by kubectl-inject itself.
		cmd = exec.Command(kubectl, "inject", "--local", "-f", filepath.Join(repoRoot(t), "examples", "cli", "app.yaml"))
		cmd.Env = append(os.Environ(),
			"PATH="+filepath.Join(krewRoot, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
			"HOME="+t.TempDir(), "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
		if out, err := cmd.Output(); err != nil || !bytes.Contains(out, []byte("sidecar.kinject.dev/status")) {
			t.Errorf("kubectl inject --local through krew: %v\n%s", err, out)
		}
	})

	if host != windows {
		t.Run("windows-zip", func(t *testing.T) {
			krewRoot := krewInstall(t, windows)
			store := filepath.Join(krewRoot, "store", "inject", testVersion)
			for _, f := range []string{"LICENSE", "kubectl-inject.exe", "kinject-live.exe", "kinject-cel.exe"} {
				if _, err := os.Stat(filepath.Join(store, f)); err != nil {
					t.Errorf("krew did not extract %s from the windows zip: %v", f, err)
				}
			}
		})
	}
}
