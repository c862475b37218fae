package functions

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/triggers"
)

// nodeRuntime runs a Node.js codebase written with firebase-functions as
// firebase-tools' functions emulator does: a TypeScript project is compiled
// by its own build script when the file package.json's main names is
// missing or older than the source; the SDK's own discovery
// (firebase-functions' bin with FUNCTIONS_MANIFEST_OUTPUT_PATH, or its
// /__/functions.yaml control API on SDKs that predate the file) lists the
// functions; one worker (node/worker.js, run with the machine's node)
// loads the module once and serves them all.
type nodeRuntime struct{}

//go:embed node/worker.js
var nodeWorker []byte

func (nodeRuntime) Name() string { return "nodejs" }

func (nodeRuntime) Detect(dir string) bool { return fileExists(filepath.Join(dir, "package.json")) }

// Watched: the module's sources and settings, outside node_modules and
// folders whose names start with "." (Output names the build's own folder,
// which is not watched either).
func (nodeRuntime) Watched(rel string, dir bool) bool {
	name := path.Base(rel)
	if dir {
		return name != "node_modules" && !strings.HasPrefix(name, ".")
	}
	switch path.Ext(name) {
	case ".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".json":
		return name != "package-lock.json"
	}
	return strings.HasPrefix(name, ".env") || name == ".secret.local"
}

// packageJSON is what loupe reads of a codebase's package.json.
type packageJSON struct {
	Main    string            `json:"main"`
	Scripts map[string]string `json:"scripts"`
	Engines struct {
		Node string `json:"node"`
	} `json:"engines"`
}

func readPackageJSON(dir string) (packageJSON, error) {
	var p packageJSON
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, fmt.Errorf("package.json: %v", err)
	}
	return p, nil
}

// Build compiles the codebase when it has to, then runs the SDK's discovery.
func (nodeRuntime) Build(ctx context.Context, cb *codebase) (Build, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return nil, errors.New("node is not on PATH: loupe runs Node.js functions with the machine's node")
	}
	pkg, err := readPackageJSON(cb.source)
	if err != nil {
		return nil, err
	}
	logNodeVersion(ctx, cb, pkg)
	if err := compileIfStale(ctx, cb, pkg); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "loupe-node-")
	if err != nil {
		return nil, err
	}
	b := &nodeBuild{dir: dir, source: cb.source}
	ok := false
	defer func() {
		if !ok {
			b.Close()
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, "worker.js"), nodeWorker, 0o600); err != nil {
		return nil, err
	}
	m, err := discover(ctx, cb, dir)
	if err != nil {
		return nil, err
	}
	if b.fns, b.params, err = m.functions(cb.name, "nodejs"); err != nil {
		return nil, fmt.Errorf("functions in %s: %w", cb.source, err)
	}
	ok = true
	return b, nil
}

// compileIfStale runs the package's build script when main is missing or
// older than a source file, as a user runs it before firebase
// emulators:start; its output is the error of a failed build.
func compileIfStale(ctx context.Context, cb *codebase, pkg packageJSON) error {
	if pkg.Scripts["build"] == "" {
		return nil
	}
	main := filepath.Join(cb.source, cmp.Or(pkg.Main, "index.js"))
	built, err := os.Stat(main)
	if err == nil && !newerSource(cb, built.ModTime(), outputDir(pkg)) {
		return nil
	}
	cmd := exec.CommandContext(ctx, "npm", "run", "build")
	cmd.Dir = cb.source
	dieWithParent(cmd)
	interruptGroup(cmd)
	cmd.WaitDelay = stopGrace
	cb.logger.Info("building the functions with npm run build", "source", cb.source)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm run build in %s failed (%v):\n%s", cb.source, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Output is the folder the codebase's build script writes (main's first
// folder), or "" without a build script: it is the build's, not the user's.
func (nodeRuntime) Output(dir string) string {
	pkg, err := readPackageJSON(dir)
	if err != nil || pkg.Scripts["build"] == "" {
		return ""
	}
	return outputDir(pkg)
}

// outputDir is the folder a build script writes: main's first folder.
func outputDir(pkg packageJSON) string {
	first, _, found := strings.Cut(path.Clean(strings.TrimPrefix(pkg.Main, "./")), "/")
	if !found {
		return ""
	}
	return first
}

// newerSource reports whether a watched file of the codebase outside out
// changed after t.
func newerSource(cb *codebase, t time.Time, out string) bool {
	newer := false
	_ = filepath.WalkDir(cb.source, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == cb.source || newer {
			return nil
		}
		rel, _ := filepath.Rel(cb.source, p)
		rel = filepath.ToSlash(rel)
		if rel == out || !cb.runtime.Watched(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if info, err := d.Info(); err == nil && !d.IsDir() && info.ModTime().After(t) {
			newer = true
		}
		return nil
	})
	return newer
}

// sdkBin finds firebase-functions' discovery script from the codebase up,
// as Node resolves the package.
func sdkBin(source string) (string, error) {
	for dir := source; ; dir = filepath.Dir(dir) {
		sdk := filepath.Join(dir, "node_modules", "firebase-functions")
		if err := checkSDKVersion(sdk); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		bin := filepath.Join(sdk, "lib", "bin", "firebase-functions.js")
		if fileExists(bin) {
			return bin, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("firebase-functions is not installed in %s: run npm install there", source)
		}
	}
}

// discoveryTimeout bounds the SDK's discovery (firebase-tools gives it 10 s
// by default; a cold module on a busy machine may need more).
const discoveryTimeout = 60 * time.Second

// discover runs the SDK's discovery in the codebase with the worker's
// environment and returns its manifest. A module that fails to load is an
// error holding the SDK's message and the stack.
func discover(ctx context.Context, cb *codebase, dir string) (*manifest, error) {
	bin, err := sdkBin(cb.source)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	out := filepath.Join(dir, "functions.json")
	cmd := exec.CommandContext(ctx, "node", bin, cb.source)
	cmd.Env = append(append(os.Environ(), cb.svc.workerEnv(cb, port)...),
		"FUNCTIONS_MANIFEST_OUTPUT_PATH="+out, "FUNCTIONS_CONTROL_API=true")
	data, err := awaitManifest(ctx, cb, cmd, port, out)
	if err != nil {
		return nil, err
	}
	return parseManifest(cb, data)
}

// awaitManifest runs the discovery process cmd in the codebase until it
// writes its manifest to the file out (when out is not "") or serves it
// on port at /__/functions.yaml, and returns the manifest as the SDK wrote
// it. A process that exits first is an error holding its output.
func awaitManifest(ctx context.Context, cb *codebase, cmd *exec.Cmd, port int, out string) ([]byte, error) {
	cmd.Dir = cb.source
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	dieWithParent(cmd)
	cmd.WaitDelay = stopGrace
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fail := func(err error) ([]byte, error) {
		return nil, fmt.Errorf("loading the functions in %s failed (%v):\n%s", cb.source, err, strings.TrimSpace(output.String()))
	}
	var data []byte
	for data == nil {
		select {
		case err := <-exited:
			if err == nil && out == "" {
				err = errors.New("the SDK exited before serving its manifest")
			}
			if err != nil {
				return fail(err)
			}
			if data, err = os.ReadFile(out); err != nil {
				return fail(fmt.Errorf("the SDK wrote no manifest: %v", err))
			}
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-exited
			return fail(ctx.Err())
		case <-time.After(100 * time.Millisecond):
			// An SDK older than the manifest file (or one with no
			// manifest file) serves it instead.
			data = controlAPIManifest(ctx, port)
			if data != nil {
				_ = cmd.Process.Kill()
				<-exited
			}
		}
	}
	return data, nil
}

// parseManifest decodes a manifest in JSON.
func parseManifest(cb *codebase, data []byte) (*manifest, error) {
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("the functions manifest of %s: %v", cb.source, err)
	}
	return &m, nil
}

// controlAPIManifest reads /__/functions.yaml (JSON, in fact) from a
// discovery server on port, or nil when none answers yet.
func controlAPIManifest(ctx context.Context, port int) []byte {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/__/functions.yaml", port), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	return data
}

// nodeBuild is a discovered Node.js codebase: the worker script in its
// own folder, and the functions.
type nodeBuild struct {
	dir, source string
	fns         []Function
	// params are the SDK params' defaults: the environment a worker gets
	// for those the .env files do not set.
	params []string
}

func (b *nodeBuild) Functions() []Function { return b.fns }

func (b *nodeBuild) Command(ctx context.Context, port int) (*exec.Cmd, func(), error) {
	cmd := exec.CommandContext(ctx, "node", filepath.Join(b.dir, "worker.js"))
	cmd.Dir = b.source
	cmd.Env = append([]string{"LOUPE_FUNCTIONS_SOURCE=" + b.source}, b.params...)
	return cmd, func() {}, nil
}

func (b *nodeBuild) HTTPPath(f Function) string { return sdkHTTPPath(f) }

// sdkHTTPPath is where loupe's Node.js and Python workers serve function f.
func sdkHTTPPath(f Function) string { return "/__/fn/" + url.PathEscape(f.Name) }

func (b *nodeBuild) Deliverer(base *url.URL, f Function) triggers.Deliverer {
	return sdkDeliverer{base: base, fn: f, path: b.HTTPPath(f)}
}

func (b *nodeBuild) Close() { os.RemoveAll(b.dir) }
