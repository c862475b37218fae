package main

import (
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

// emulator is one running server: loupe, or one of Google's emulators, in a
// process group of its own so that stopping it also stops the JVM the
// wrappers start.
type emulator struct {
	name  string
	host  string // 127.0.0.1:port
	cmd   *exec.Cmd
	start time.Duration // spawn until it answered HTTP
	log   *os.File
}

// freePort asks the kernel for a port of 127.0.0.1 nobody listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// spawn starts argv in its own process group, output to a log in dir, and
// waits until GET readyPath on port answers (any status), at most wait.
func spawn(name, dir string, env []string, port int, readyPath string, wait time.Duration, argv ...string) (*emulator, error) {
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	e := &emulator{name: name, host: "127.0.0.1:" + strconv.Itoa(port), cmd: cmd, log: log}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	client := &http.Client{Timeout: time.Second}
	for deadline := began.Add(wait); ; {
		if res, err := client.Get("http://" + e.host + readyPath); err == nil {
			res.Body.Close()
			e.start = time.Since(began)
			return e, nil
		}
		select {
		case err := <-exited:
			log.Close()
			return nil, fmt.Errorf("%s exited before it answered (%v); its output is in %s", name, err, log.Name())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			e.stop()
			return nil, fmt.Errorf("%s did not answer within %s; its output is in %s", name, wait, log.Name())
		}
	}
}

// stop kills the emulator's process group and waits for its leader.
func (e *emulator) stop() {
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	for i := 0; i < 100 && syscall.Kill(e.cmd.Process.Pid, 0) == nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	e.log.Close()
}

// rssMB is the resident memory of the emulator's process group, counting only
// the servers themselves (loupe, java, node), not the wrappers that start
// them (gcloud's Python, shells).
func (e *emulator) rssMB() float64 {
	entries, _ := os.ReadDir("/proc")
	var kb int64
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if pgid, err := syscall.Getpgid(pid); err != nil || pgid != e.cmd.Process.Pid {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", d.Name(), "status"))
		if err != nil {
			continue
		}
		var comm string
		for _, line := range strings.Split(string(status), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) >= 2 && f[0] == "Name:":
				comm = f[1]
			case len(f) >= 2 && f[0] == "VmRSS:" && (comm == "java" || comm == "node" || comm == "loupe"):
				n, _ := strconv.ParseInt(f[1], 10, 64)
				kb += n
			}
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
	project  string
	work     string // a temporary folder for data, logs and firebase.json
}

var errAbsent = errors.New("not installed")

// startLoupe starts one loupe serving Firestore, Pub/Sub and Storage.
func (p *peers) startLoupe(dir string) (*emulator, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	argv := []string{p.loupe, "serve", "--port", strconv.Itoa(port), "--only", "firestore,pubsub,storage",
		"-P", p.project, "--data-dir", filepath.Join(dir, "loupe-data")}
	if p.inMemory {
		argv = append(argv, "--in-memory")
	}
	return spawn("loupe", dir, nil, port, "/healthz", time.Minute, argv...)
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
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	argv := append([]string{p.gcloud}, args...)
	argv = append(argv, "--host-port=127.0.0.1:"+strconv.Itoa(port))
	return spawn(name, dir, nil, port, "/", 3*time.Minute, argv...)
}

// startStorage starts firebase-tools' Storage emulator (in memory) from a
// firebase.json of its own. Its rules runtime is the stand-in in emuPath.
func (p *peers) startStorage(dir string) (*emulator, error) {
	if p.firebase == "" {
		return nil, errAbsent
	}
	var ports [3]int
	for i := range ports {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = port
	}
	config := fmt.Sprintf(`{"storage":{"rules":"storage.rules"},"emulators":{"storage":{"host":"127.0.0.1","port":%d},`+
		`"hub":{"host":"127.0.0.1","port":%d},"logging":{"host":"127.0.0.1","port":%d},"ui":{"enabled":false}}}`,
		ports[0], ports[1], ports[2])
	rules := "rules_version = '2';\nservice firebase.storage { match /b/{bucket}/o { match /{all=**} { allow read, write: if false; } } }\n"
	if err := os.WriteFile(filepath.Join(dir, "firebase.json"), []byte(config), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "storage.rules"), []byte(rules), 0o644); err != nil {
		return nil, err
	}
	return spawn("official-storage", dir, []string{"FIREBASE_EMULATORS_PATH=" + p.emuPath}, ports[0], "/", 3*time.Minute,
		p.firebase, "emulators:start", "--only", "storage", "--project", p.project)
}

// findPeers reports which official emulators this machine has.
func findPeers(cache string) (gcloud, firebase string, absent []string) {
	if g, err := exec.LookPath("gcloud"); err == nil {
		for _, pkg := range []string{"google-cloud-cli-firestore-emulator", "google-cloud-cli-pubsub-emulator"} {
			if exec.Command("dpkg", "-s", pkg).Run() != nil {
				absent = append(absent, pkg+" is not installed: the Firestore and Pub/Sub rows are skipped")
				g = ""
			}
		}
		gcloud = g
	} else {
		absent = append(absent, "gcloud is not installed: the Firestore and Pub/Sub rows are skipped")
	}
	fb := filepath.Join(cache, "node_modules", ".bin", "firebase")
	jar := filepath.Join(cache, "emulators", "cloud-storage-rules-runtime-v1.1.3.jar")
	if _, err := os.Stat(fb); err != nil {
		absent = append(absent, "firebase-tools is not in "+cache+": the Storage rows are skipped")
	} else if _, err := os.Stat(jar); err != nil {
		absent = append(absent, "the rules runtime stand-in is not in "+jar+": the Storage rows are skipped")
	} else {
		firebase = fb
	}
	return gcloud, firebase, absent
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
