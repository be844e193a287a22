package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"
)

const (
	modulePath = "github.com/kinject/kubectl-inject"
	versionPkg = modulePath + "/pkg/version"
	releaseURL = "https://github.com/kinject/kubectl-inject/releases/download"
	pluginName = "kubectl-inject"
	liveName   = "kinject-live" // the full command kubectl-inject hands all but --local to
	helperName = "kinject-cel"  // the CEL evaluator kubectl-inject and inject-fn run beside them
	fnName     = "inject-fn"
	checksums  = "checksums.txt"
	// krewManifest is the krew manifest rendered for the archives built.
	krewManifest = "krew.yaml"
	maxParallel  = 2 // concurrent `go build`s: the release machine has 2 cores
)

// allPlatforms is the release matrix, in manifest order.
var allPlatforms = []platform{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// semverRE is what krew accepts as spec.version.
var semverRE = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// archiveTime is the modification time of every archive entry (reproducible archives).
var archiveTime = time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC)

type platform struct{ OS, Arch string }

func (p platform) String() string { return p.OS + "/" + p.Arch }
func (p platform) exe() string {
	if p.OS == "windows" {
		return ".exe"
	}
	return ""
}

// archiveName is the plugin archive of version v for p.
func archiveName(v string, p platform) string {
	ext := ".tar.gz"
	if p.OS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("%s_%s_%s_%s%s", pluginName, v, p.OS, p.Arch, ext)
}

// rawBinaryName is the release's raw binary of program (inject-fn, or
// kinject-cel to install beside it) of version v for p.
func rawBinaryName(program, v string, p platform) string {
	return fmt.Sprintf("%s_%s_%s_%s%s", program, v, p.OS, p.Arch, p.exe())
}

// pluginBinaries are the binaries of the kubectl plugin's and the Helm
// plugin's archives.
func pluginBinaries(p platform) []string {
	return []string{pluginName + p.exe(), liveName + p.exe(), helperName + p.exe()}
}

func main() {
	var (
		version   = flag.String("version", "", "release version, e.g. v0.1.0 (required; `make dist` passes hack/version.sh's)")
		commit    = flag.String("commit", "unknown", "commit recorded in the binaries")
		out       = flag.String("out", "dist", "output directory")
		plats     = flag.String("platforms", "", "comma-separated OS/ARCH list to build (default: all of "+platformList(allPlatforms)+")")
		krewTmpl  = flag.String("krew-template", "", "krew manifest template, rendered into -out/krew.yaml (default: <module root>/krew.yaml)")
		license   = flag.String("license", "", "LICENSE file put in the archives (default: <module root>/LICENSE)")
		skipBuild = flag.Bool("skip-build", false, "do not build; render -out/krew.yaml from the archives already in -out")
	)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./hack/dist -version V [-commit C] [-out DIR] [-platforms OS/ARCH,...]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fail(fmt.Errorf("unexpected arguments %q", flag.Args()))
	}
	if err := run(*version, *commit, *out, *plats, *krewTmpl, *license, *skipBuild); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dist:", err)
	os.Exit(1)
}

func run(version, commit, out, plats, krewTmpl, license string, skipBuild bool) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if krewTmpl == "" {
		krewTmpl = filepath.Join(root, "krew.yaml")
	}
	if license == "" {
		license = filepath.Join(root, "LICENSE")
	}
	platforms, err := parsePlatforms(plats)
	if err != nil {
		return err
	}
	if version == "" {
		return errors.New("-version is required")
	}
	if strings.ContainsAny(version, "/\\ ") {
		return fmt.Errorf("bad -version %q", version)
	}
	if !skipBuild {
		if err := build(root, version, commit, out, license, platforms); err != nil {
			return err
		}
	}
	if !semverRE.MatchString(version) {
		fmt.Fprintf(os.Stderr, "dist: no %s: krew needs a semantic version like v0.1.0, not %q\n", filepath.Join(out, krewManifest), version)
		return nil
	}
	sums, err := readChecksums(filepath.Join(out, checksums))
	if err != nil {
		return err
	}
	manifest := filepath.Join(out, krewManifest)
	if err := renderKrew(krewTmpl, manifest, version, platforms, sums); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "dist: wrote %s\n", manifest)
	host := platform{runtime.GOOS, runtime.GOARCH}
	for _, p := range platforms {
		if p == host {
			fmt.Fprintf(os.Stderr, "dist: install it on this machine with\n  kubectl krew install --manifest=%s --archive=%s\n",
				manifest, filepath.Join(out, archiveName(version, host)))
		}
	}
	return nil
}

func platformList(ps []platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// parsePlatforms parses "os/arch,..." ("" = all), keeping the release order.
func parsePlatforms(s string) ([]platform, error) {
	if s == "" {
		return allPlatforms, nil
	}
	want := map[platform]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		goos, goarch, ok := strings.Cut(f, "/")
		p := platform{goos, goarch}
		known := false
		for _, q := range allPlatforms {
			known = known || q == p
		}
		if !ok || !known {
			return nil, fmt.Errorf("unknown platform %q (want some of %s)", f, platformList(allPlatforms))
		}
		want[p] = true
	}
	var ps []platform
	for _, p := range allPlatforms {
		if want[p] {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return nil, errors.New("-platforms is empty")
	}
	return ps, nil
}

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot() (string, error) {
	b, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(b))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the kubectl-inject module (run from the repository)")
	}
	return filepath.Dir(gomod), nil
}

// build cross-compiles the binaries for every platform (at most maxParallel
// at once), archives the kubectl plugin and the Helm plugin, and writes
// checksums.txt.
func build(root, version, commit, out, license string, platforms []platform) error {
	lic, err := os.ReadFile(license)
	if err != nil {
		return err
	}
	helmPlugin, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(helmPluginFile)))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kinject-dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	ldflags := fmt.Sprintf("-s -w -X %s.Version=%s -X %s.Commit=%s", versionPkg, version, versionPkg, commit)
	type job struct {
		p       platform
		pkg     string // ./plugin/kubectl-inject, ./plugin/kinject-live, ./plugin/kinject-cel or ./fn/inject-fn
		binPath string
	}
	var jobs []job
	var artifacts []string
	pluginDir := func(p platform) string { return filepath.Join(tmp, p.OS+"_"+p.Arch) }
	for _, p := range platforms {
		jobs = append(jobs,
			job{p, "./plugin/kubectl-inject", filepath.Join(pluginDir(p), pluginName+p.exe())},
			job{p, "./plugin/kinject-live", filepath.Join(pluginDir(p), liveName+p.exe())},
			job{p, "./plugin/kinject-cel", filepath.Join(pluginDir(p), helperName+p.exe())},
			job{p, "./fn/inject-fn", filepath.Join(out, rawBinaryName(fnName, version, p))})
		artifacts = append(artifacts, archiveName(version, p), helmArchiveName(version, p), rawBinaryName(fnName, version, p), rawBinaryName(helperName, version, p))
	}

	sem := make(chan struct{}, maxParallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			err := goBuild(root, j.p, j.pkg, ldflags, j.binPath)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w", j.pkg, j.p, err))
				return
			}
			fmt.Fprintf(os.Stderr, "dist: built %-28s %-13s in %s\n", j.pkg, j.p, time.Since(start).Round(100*time.Millisecond))
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, p := range platforms {
		if err := copyBinary(filepath.Join(pluginDir(p), helperName+p.exe()), filepath.Join(out, rawBinaryName(helperName, version, p))); err != nil {
			return err
		}
		if err := writeArchive(filepath.Join(out, archiveName(version, p)), p, pluginDir(p), lic); err != nil {
			return fmt.Errorf("archive %s: %w", p, err)
		}
		pluginYAML, err := helmPluginYAML(helmPlugin, version, p)
		if err == nil {
			err = writeHelmPlugin(filepath.Join(out, helmArchiveName(version, p)), p, pluginDir(p), pluginYAML, lic)
		}
		if err != nil {
			return fmt.Errorf("helm plugin archive %s: %w", p, err)
		}
	}
	return writeChecksums(out, artifacts)
}

// copyBinary copies the built binary from to to.
func copyBinary(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

func goBuild(root string, p platform, pkg, ldflags, outPath string) error {
	if err := os.MkdirAll(filepath.Dir(outPath), 0o755); err != nil {
		return err
	}
	abs, err := filepath.Abs(outPath)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", abs, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, stderr.String())
	}
	return os.Chmod(abs, 0o755)
}
