// Package loupetest runs `loupe serve` for tests and stops it when the test
// ends.
//
// By default loupe runs in the test's own process: the CLI's serve command
// (internal/cli.Serve, the flags parsed as the binary parses them) over a
// real listener on a free port of 127.0.0.1, so the SDKs connect to it as to
// a child (gRPC over HTTP/2, WebSocket, REST), and its coverage, races and
// panics count in the test. Options.Process starts the binary instead
// ($LOUPE_BIN, or one built from this module), for what needs a process of
// its own: SIGKILL and signals (Kill, Signal, PID), a command prefix such as
// prlimit, an environment of its own beyond the variables serve reads
// (Options.Env reaches an in-process serve through its getenv). Either way it gets a temporary data
// dir and an empty configuration unless the test says otherwise, is stopped
// in t.Cleanup as SIGTERM stops it, and its log is printed only when the
// test fails.
package loupetest

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/cli"
)

// Options adjust how the server is started.
type Options struct {
	// DataDir is the --data-dir; "" means a new temporary folder.
	DataDir string
	// InMemory passes --in-memory.
	InMemory bool
	// Config is the firebase.json path; "" means an empty configuration.
	Config string
	// Args are extra arguments to `loupe serve`.
	Args []string
	// Process starts loupe as a child process of the test instead of in
	// its process: for Kill, Signal, PID and what else needs a process.
	Process bool
	// Env is added to the environment loupe reads: a child's, or for an
	// in-process loupe the variables serve reads through its getenv
	// (STRIPE_SECRET_KEY, RATES_UPSTREAM_URL, FIREBASE_CONFIG, and TMPDIR,
	// where the Emulator Hub writes its locator file); a variable Env does
	// not name is the test process's own. Anything else in the process
	// (e.g. GOFLAGS for the functions' builds) needs Process.
	Env []string
	// Prefix runs the binary under a command that executes it, e.g.
	// {"prlimit", "--nofile=256:256"} to start it with few file
	// descriptors; it implies Process.
	Prefix []string
	// Bin is the binary to start instead of Binary's, e.g. one the test
	// built itself; it implies Process.
	Bin string
}

// Instance is a running `loupe serve`, in the test's process or a child.
type Instance struct {
	// URL is the base URL, e.g. http://127.0.0.1:41234.
	URL string
	// Host is host:port of URL, the value of the *_EMULATOR_HOST variables.
	Host string
	// DataDir is the data dir in use.
	DataDir string
	// AdminHost is host:port of the admin port with --strict-credentials
	// (where the Admin SDKs' owner credential is the admin: the value for
	// their *_EMULATOR_HOST variables), "" without.
	AdminHost string

	t    testing.TB
	log  *syncBuffer
	done chan struct{} // closed once loupe has stopped
	// A child process, or nil in the test's process.
	cmd *exec.Cmd
	// In the test's process: cancel stops serve, err is what it returned
	// (read once done is closed).
	cancel context.CancelFunc
	err    error
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary returns the path of the loupe binary: $LOUPE_BIN, or one it builds
// from the repository on first use.
//
// Go's test cache keys a result on the files of the module that the test
// process opened or stat'ed (starting a program counts as opening it), and
// on nothing else outside the test binary. A $LOUPE_BIN inside the module
// (make test's bin/loupe) is thus rechecked before a cached result is used;
// one outside it never is, so Binary refuses it unless the result cannot be
// cached (go test -count=1). When it builds the binary itself, Binary stats
// every source file the build reads, so that a change to any of them runs
// the tests again instead of answering "ok (cached)".
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() { binPath, buildErr = binary() })
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func binary() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	if p := os.Getenv("LOUPE_BIN"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("LOUPE_BIN: %w", err)
		}
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("LOUPE_BIN: %w", err)
		}
		if f := flag.Lookup("test.testlogfile"); f != nil && f.Value.String() != "" && !strings.HasPrefix(abs, root+string(filepath.Separator)) {
			return "", fmt.Errorf("LOUPE_BIN=%s is outside the module %s, where go test's cache cannot see it change: "+
				"put the binary under the repository (make test uses bin/loupe) or run go test with -count=1", p, root)
		}
		return abs, nil
	}
	if err := statSources(root); err != nil {
		return "", err
	}
	// One binary in the repository's bin/ for every test package, so runs
	// leave no copies behind: each package builds its own and renames it
	// into place, which leaves a binary other packages' tests are running
	// intact.
	dir := filepath.Join(root, "bin", "loupetest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "loupe")
	staged := fmt.Sprintf("%s.%d", bin, os.Getpid())
	build := exec.Command("go", "build", "-o", staged, "./cmd/loupe")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		os.Remove(staged)
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, os.Rename(staged, bin)
}

// statSources stats the files a build of cmd/loupe may read (Go sources, the
// embedded console, both modules' go.mod and go.sum; not node_modules), so the test cache
// notices a change to any of them.
func statSources(root string) error {
	for _, dir := range []string{"cmd", "internal", "functions"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "node_modules" {
					return filepath.SkipDir
				}
				return nil
			}
			_, err = os.Stat(path)
			return err
		})
		if err != nil {
			return fmt.Errorf("stat loupe's sources: %w", err)
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			return err
		}
	}
	return nil
}

// Start runs `loupe serve` and waits until /healthz answers 200: in the
// test's process unless opts asks for a child (Process, Prefix).
func Start(t testing.TB, opts Options) *Instance {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.Config == "" {
		opts.Config = filepath.Join(t.TempDir(), "firebase.json")
		if err := os.WriteFile(opts.Config, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"--port", "0", "--data-dir", opts.DataDir, "--config", opts.Config}
	if opts.InMemory {
		args = append(args, "--in-memory")
	}
	args = append(args, opts.Args...)
	inst := &Instance{t: t, DataDir: opts.DataDir, log: &syncBuffer{}, done: make(chan struct{})}
	var stdout io.Reader
	if opts.Process || len(opts.Prefix) > 0 || opts.Bin != "" {
		stdout = inst.startChild(t, opts, args)
	} else {
		stdout = inst.startInProcess(args, opts.Env)
	}
	urlc, adminc := make(chan string, 1), make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			_, _ = inst.log.Write([]byte(line + "\n"))
			if u, ok := strings.CutPrefix(line, "Loupe is running at "); ok {
				urlc <- u
			}
			if strings.HasPrefix(line, "Admin port ") {
				adminc <- line[strings.LastIndex(line, "http://")+len("http://"):]
			}
		}
		// An in-process serve's pipe: unblock it if it prints more.
		_, _ = io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		inst.Stop(t)
		if t.Failed() {
			t.Logf("loupe serve log:\n%s", inst.log.String())
		}
	})
	select {
	case inst.URL = <-urlc:
	case <-inst.done:
		t.Fatalf("loupe serve exited before listening:\n%s", inst.log.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("loupe serve did not print its URL:\n%s", inst.log.String())
	}
	inst.Host = strings.TrimPrefix(inst.URL, "http://")
	if slices.Contains(opts.Args, "--strict-credentials") {
		select {
		case inst.AdminHost = <-adminc:
		case <-time.After(10 * time.Second):
			t.Fatalf("loupe serve --strict-credentials printed no admin port:\n%s", inst.log.String())
		}
	}
	if err := inst.waitHealthy(30 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, inst.log.String())
	}
	return inst
}

// startChild starts the binary with args and returns its standard output.
func (inst *Instance) startChild(t testing.TB, opts Options, args []string) io.Reader {
	t.Helper()
	bin := opts.Bin
	if bin == "" {
		bin = Binary(t)
	}
	command := append(append([]string{}, opts.Prefix...), bin)
	inst.cmd = exec.Command(command[0], append(command[1:], append([]string{"serve"}, args...)...)...)
	inst.cmd.Env = append(os.Environ(), opts.Env...)
	inst.cmd.Stderr = inst.log
	stdout, err := inst.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = inst.cmd.Wait(); close(inst.done) }()
	return stdout
}

// startInProcess runs serve with args in this process, its log going to
// inst.log as a child's standard error does, and returns what it prints.
// Serve reads env (NAME=value, the last one of a name winning, as for a
// child) before the process's environment.
func (inst *Instance) startInProcess(args, env []string) io.Reader {
	vars := map[string]string{}
	for _, kv := range env {
		if name, value, ok := strings.Cut(kv, "="); ok {
			vars[name] = value
		}
	}
	getenv := func(name string) string {
		if value, ok := vars[name]; ok {
			return value
		}
		return os.Getenv(name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inst.cancel = cancel
	r, w := io.Pipe()
	go func() {
		defer close(inst.done)
		defer w.Close()
		inst.err = cli.Serve(ctx, args, w, inst.log, getenv)
		if inst.err != nil {
			// As the binary's main reports it.
			fmt.Fprintln(inst.log, "loupe:", inst.err)
		}
	}()
	return r
}

func (inst *Instance) waitHealthy(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, inst.URL+"/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("loupe serve at %s never became healthy", inst.URL)
		case <-inst.done:
			return fmt.Errorf("loupe serve exited while starting")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop stops loupe as SIGTERM does (in the test's process, by ending
// serve's context) and waits until it has: its data dir is then complete
// on disk. It is safe to call twice.
func (inst *Instance) Stop(t testing.TB) {
	t.Helper()
	if inst.cmd != nil {
		inst.Signal(t, syscall.SIGTERM)
		return
	}
	inst.cancel()
	select {
	case <-inst.done:
	case <-time.After(15 * time.Second):
		t.Errorf("loupe serve did not stop within 15 s of its context ending")
	}
}

// needsProcess fails the test when loupe runs in its process.
func (inst *Instance) needsProcess(what string) {
	if inst.cmd == nil {
		inst.t.Helper()
		inst.t.Fatalf("loupetest: %s needs loupe in a process of its own: start it with Options{Process: true}", what)
	}
}

// Signal sends sig to the child process and waits for it to exit, killing
// it (and failing t) after 15 s; once it has exited it does nothing.
func (inst *Instance) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	inst.needsProcess("Signal")
	select {
	case <-inst.done:
		return
	default:
	}
	_ = inst.cmd.Process.Signal(sig)
	select {
	case <-inst.done:
	case <-time.After(15 * time.Second):
		_ = inst.cmd.Process.Kill()
		<-inst.done
		t.Errorf("loupe serve did not stop within 15 s of %v", sig)
	}
}

// Kill ends the child process with SIGKILL, as a crash would.
func (inst *Instance) Kill() {
	inst.t.Helper()
	inst.needsProcess("Kill")
	_ = inst.cmd.Process.Kill()
	<-inst.done
}

// PID is the process id of the child (benchmarks read its memory from /proc).
func (inst *Instance) PID() int {
	inst.t.Helper()
	inst.needsProcess("PID")
	return inst.cmd.Process.Pid
}

// ExitCode is loupe's exit code after it has stopped: the child's, or in
// the test's process the code the binary would exit with for what serve
// returned.
func (inst *Instance) ExitCode() int {
	<-inst.done
	if inst.cmd == nil {
		return cli.ExitCode(inst.err)
	}
	return inst.cmd.ProcessState.ExitCode()
}

// AdminToken is the strict mode's admin credential, read from the data dir
// (loupe writes it at start with --strict-credentials).
func (inst *Instance) AdminToken(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(inst.DataDir, "admin-token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// Log is everything loupe printed so far: its start-up lines and its log.
func (inst *Instance) Log() string { return inst.log.String() }

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
