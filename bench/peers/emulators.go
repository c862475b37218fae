package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// emulator is one running server (or command): loupe, or one of Google's
// emulators, in a process group of its own.
type emulator struct {
	name  string
	host  string // 127.0.0.1:port
	cmd   *exec.Cmd
	start time.Duration // spawn until it was ready
	log   *os.File
	done  chan struct{} // closed once the process has exited
	err   error         // its exit, once done
}

// freePorts asks the kernel for n distinct ports of 127.0.0.1 nobody listens
// on.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// launch starts argv in dir in its own process group, its output to a log in
// dir.
func launch(name, dir string, env []string, argv ...string) (*emulator, error) {
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	e := &emulator{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		e.err = cmd.Wait()
		close(e.done)
	}()
	return e, nil
}

// answers is ready when GET path on the emulator's host answers (any
// status).
func answers(path string) func(*emulator) bool {
	client := &http.Client{Timeout: time.Second}
	return func(e *emulator) bool {
		res, err := client.Get("http://" + e.host + path)
		if err == nil {
			res.Body.Close()
		}
		return err == nil
	}
}

// says is ready when the emulator's output holds line (firebase-tools' and
// loupe's "All emulators ready!").
func says(line string) func(*emulator) bool {
	return func(e *emulator) bool {
		out, _ := os.ReadFile(e.log.Name())
		return bytes.Contains(out, []byte(line))
	}
}

// readyLine is what firebase emulators:start and loupe emulators:start print
// once every emulator is ready.
const readyLine = "All emulators ready!"

// spawn launches argv, answering at host, and waits until ready says so, at
// most wait.
func spawn(name, dir string, env []string, host string, ready func(*emulator) bool, wait time.Duration, argv ...string) (*emulator, error) {
	began := time.Now()
	e, err := launch(name, dir, env, argv...)
	if err != nil {
		return nil, err
	}
	e.host = host
	for deadline := began.Add(wait); ; {
		if ready(e) {
			e.start = time.Since(began)
			return e, nil
		}
		select {
		case <-e.done:
			e.log.Close()
			return nil, fmt.Errorf("%s exited before it was ready (%v); its output is in %s", name, e.err, e.log.Name())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			e.stop()
			return nil, fmt.Errorf("%s was not ready within %s; its output is in %s", name, wait, e.log.Name())
		}
	}
}

// stop interrupts the emulator's process group (as Ctrl-C in a terminal
// would), gives it 10 s to stop, then kills what is left of its processes:
// the group and every descendant (firebase-tools starts its Java emulators
// in sessions of their own).
func (e *emulator) stop() {
	pids := e.processes()
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-e.done:
	case <-time.After(10 * time.Second):
	}
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	<-e.done
	e.log.Close()
}

// process is one line of /proc: a pid, its parent, group and name, and its
// resident memory.
type process struct {
	pid, ppid, pgid int
	comm            string
	rssKB           int64
}

// processList reads every process of /proc (those that end meanwhile are
// left out).
func processList() []process {
	entries, _ := os.ReadDir("/proc")
	var list []process
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", d.Name(), "status"))
		if err != nil {
			continue
		}
		p := process{pid: pid}
		for _, line := range strings.Split(string(status), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			switch f[0] {
			case "Name:":
				p.comm = f[1]
			case "PPid:":
				p.ppid, _ = strconv.Atoi(f[1])
			case "VmRSS:":
				p.rssKB, _ = strconv.ParseInt(f[1], 10, 64)
			}
		}
		if p.pgid, err = syscall.Getpgid(pid); err == nil {
			list = append(list, p)
		}
	}
	return list
}

// tree is the emulator's processes: its process group and every descendant
// of its leader.
func (e *emulator) tree() []process {
	list := processList()
	leader := e.cmd.Process.Pid
	in := map[int]bool{leader: true}
	for grew := true; grew; {
		grew = false
		for _, p := range list {
			if !in[p.pid] && (in[p.ppid] || p.pgid == leader) {
				in[p.pid], grew = true, true
			}
		}
	}
	var tree []process
	for _, p := range list {
		if in[p.pid] {
			tree = append(tree, p)
		}
	}
	return tree
}

// processes are the pids of the emulator's tree.
func (e *emulator) processes() []int {
	var pids []int
	for _, p := range e.tree() {
		pids = append(pids, p.pid)
	}
	return pids
}

// rssMB is the resident memory of the emulator's tree, counting only the
// servers themselves (loupe, java, node: firebase-tools and the functions'
// runtimes), not the wrappers that start them (gcloud's Python, shells).
func (e *emulator) rssMB() float64 {
	var kb int64
	for _, p := range e.tree() {
		if p.comm == "java" || p.comm == "node" || p.comm == "loupe" {
			kb += p.rssKB
		}
	}
	return float64(kb) / 1024
}

// peers says where each server comes from and how to start it.
type peers struct {
	loupe    string // the loupe binary
	inMemory bool   // run loupe with --in-memory
	gcloud   string // gcloud, when its Firestore and Pub/Sub emulators are installed
	firebase string // firebase-tools' CLI in the peers cache, when installed
	emuPath  string // FIREBASE_EMULATORS_PATH, holding the rules runtime stand-in
	// suite is the functions fixtures' node_modules in the peers cache,
	// when the whole suite can run under firebase-tools.
	suite string
	// codelab is firebase/emulators-codelab's final state in the peers
	// cache, its npm packages installed, when firebase-tools can run it.
	codelab string
	project string
	work    string // a temporary folder for data, logs and firebase.json
}

var errAbsent = errors.New("not installed")

// closedStorageRules deny every request that asks rules (the Admin SDK's
// never do).
const closedStorageRules = "rules_version = '2';\nservice firebase.storage { match /b/{bucket}/o { match /{all=**} { allow read, write: if false; } } }\n"

// startLoupe starts one loupe serving Firestore, Pub/Sub and Storage.
func (p *peers) startLoupe(dir string) (*emulator, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	port := ports[0]
	argv := []string{p.loupe, "serve", "--port", strconv.Itoa(port), "--only", "firestore,pubsub,storage",
		"-P", p.project, "--data-dir", filepath.Join(dir, "loupe-data")}
	if p.inMemory {
		argv = append(argv, "--in-memory")
	}
	return spawn("loupe", dir, nil, "127.0.0.1:"+strconv.Itoa(port), answers("/healthz"), time.Minute, argv...)
}

// startFirestore starts the Cloud SDK's Firestore emulator (in memory).
func (p *peers) startFirestore(dir string) (*emulator, error) {
	return p.startGcloud(dir, "official-firestore", "emulators", "firestore", "start")
}

// startPubSub starts the Cloud SDK's Pub/Sub emulator (in memory).
func (p *peers) startPubSub(dir string) (*emulator, error) {
	return p.startGcloud(dir, "official-pubsub", "beta", "emulators", "pubsub", "start",
		"--project="+p.project, "--data-dir="+dir)
}

// startGcloud runs gcloud with args and --host-port on a free port.
func (p *peers) startGcloud(dir, name string, args ...string) (*emulator, error) {
	if p.gcloud == "" {
		return nil, errAbsent
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	port := ports[0]
	argv := append([]string{p.gcloud}, args...)
	argv = append(argv, "--host-port=127.0.0.1:"+strconv.Itoa(port))
	return spawn(name, dir, nil, "127.0.0.1:"+strconv.Itoa(port), answers("/"), 3*time.Minute, argv...)
}

// startStorage starts firebase-tools' Storage emulator (in memory) from a
// firebase.json of its own. Its rules runtime is the stand-in in emuPath.
func (p *peers) startStorage(dir string) (*emulator, error) {
	if p.firebase == "" {
		return nil, errAbsent
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	config := fmt.Sprintf(`{"storage":{"rules":"storage.rules"},"emulators":{"storage":{"host":"127.0.0.1","port":%d},`+
		`"hub":{"host":"127.0.0.1","port":%d},"logging":{"host":"127.0.0.1","port":%d},"ui":{"enabled":false}}}`,
		ports[0], ports[1], ports[2])
	if err := os.WriteFile(filepath.Join(dir, "firebase.json"), []byte(config), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "storage.rules"), []byte(closedStorageRules), 0o644); err != nil {
		return nil, err
	}
	return spawn("official-storage", dir, []string{"FIREBASE_EMULATORS_PATH=" + p.emuPath}, "127.0.0.1:"+strconv.Itoa(ports[0]), answers("/"), 3*time.Minute,
		p.firebase, "emulators:start", "--only", "storage", "--project", p.project)
}

// find notes which official emulators and codebases this machine has, and
// says what is absent and which rows that skips.
func (p *peers) find(cache string) (absent []string) {
	if g, err := exec.LookPath("gcloud"); err == nil {
		for _, pkg := range []string{"google-cloud-cli-firestore-emulator", "google-cloud-cli-pubsub-emulator"} {
			if exec.Command("dpkg", "-s", pkg).Run() != nil {
				absent = append(absent, pkg+" is not installed: the Firestore and Pub/Sub rows are skipped")
				g = ""
			}
		}
		p.gcloud = g
	} else {
		absent = append(absent, "gcloud is not installed: the Firestore and Pub/Sub rows are skipped")
	}
	fb := filepath.Join(cache, "node_modules", ".bin", "firebase")
	jar := filepath.Join(p.emuPath, "cloud-storage-rules-runtime-v1.1.3.jar")
	if _, err := os.Stat(fb); err != nil {
		return append(absent, "firebase-tools is not in "+cache+": the Storage, whole-suite and codelab rows are skipped")
	}
	if _, err := os.Stat(jar); err != nil {
		return append(absent, "the rules runtime stand-in is not in "+jar+": the Storage, whole-suite and codelab rows are skipped")
	}
	p.firebase = fb
	// setup.sh puts the Cloud SDK's emulators under the names firebase-tools
	// looks for.
	firestore, _ := filepath.Glob(filepath.Join(p.emuPath, "cloud-firestore-emulator-v*.jar"))
	pubsub, _ := filepath.Glob(filepath.Join(p.emuPath, "pubsub-emulator-*", "pubsub-emulator", "bin", "cloud-pubsub-emulator"))
	if len(firestore) == 0 || len(pubsub) == 0 {
		return append(absent, "firebase-tools' Firestore and Pub/Sub emulators (the Cloud SDK's, linked by bench/peers/setup.sh) are not in "+
			p.emuPath+": the whole-suite and codelab rows are skipped")
	}
	if _, err := os.Stat(filepath.Join(cache, "suite", "node_modules", "firebase-functions")); err != nil {
		absent = append(absent, "the functions fixtures' npm packages are not in "+filepath.Join(cache, "suite")+": the whole-suite rows are skipped")
	} else {
		p.suite = filepath.Join(cache, "suite", "node_modules")
	}
	codelab := filepath.Join(cache, "emulators-codelab")
	if _, err := os.Stat(filepath.Join(codelab, "functions", "node_modules", "mocha")); err != nil {
		absent = append(absent, "firebase/emulators-codelab is not in "+codelab+" with its npm packages: the codelab rows are skipped")
	} else {
		p.codelab = codelab
	}
	return absent
}

// withEnv runs f with environment variables set, then restores them (the
// Google clients read their emulator's address from the environment).
func withEnv(ctx context.Context, vars map[string]string, f func(context.Context) error) error {
	old := map[string]*string{}
	for k, v := range vars {
		if o, ok := os.LookupEnv(k); ok {
			old[k] = &o
		} else {
			old[k] = nil
		}
		os.Setenv(k, v)
	}
	defer func() {
		for k, v := range old {
			if v == nil {
				os.Unsetenv(k)
			} else {
				os.Setenv(k, *v)
			}
		}
	}()
	return f(ctx)
}
