package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

func TestServe_HealthyThenStopsOnSIGTERM(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{Process: true})
	resp, err := http.Get(inst.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var health struct {
		Status   string            `json:"status"`
		Project  string            `json:"project"`
		Services map[string]string `json:"services"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&health); err != nil {
		t.Fatal(err)
	}
	if health.Status != "ready" || health.Project != "demo-loupe" || health.Services["hosting"] != "ready" {
		t.Errorf("healthz = %+v", health)
	}
	inst.Stop(t)
	if code := inst.ExitCode(); code != 0 {
		t.Errorf("exit code after SIGTERM = %d, want 0\n%s", code, inst.Log())
	}
}

func TestServe_CORSPreflight(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{Process: true})
	req, _ := http.NewRequest(http.MethodOptions, inst.URL+"/v1/projects/p/databases/(default)/documents:commit", nil)
	req.Header.Set("Origin", "http://localhost:5173")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,x-goog-api-client")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := resp.Header
	if resp.StatusCode != http.StatusNoContent ||
		h.Get("Access-Control-Allow-Origin") != "http://localhost:5173" ||
		h.Get("Access-Control-Allow-Credentials") != "true" ||
		h.Get("Access-Control-Allow-Headers") != "authorization,x-goog-api-client" {
		t.Errorf("preflight = %d %v", resp.StatusCode, h)
	}
}

// runLoupe runs the binary to completion and returns its exit code and stderr.
func runLoupe(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(loupetest.Binary(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

func TestServe_BadInput(t *testing.T) {
	dir := t.TempDir()
	badConfig := filepath.Join(dir, "firebase.json")
	if err := os.WriteFile(badConfig, []byte("{\n  \"hosting\": {\"public\": }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyConfig := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(emptyConfig, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)

	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"unknown flag", []string{"serve", "--bogus"}, 2, "loupe: unknown flag: --bogus\n"},
		{"malformed firebase.json", []string{"serve", "--config", badConfig, "--in-memory"}, 2,
			"loupe: " + badConfig + ": invalid JSON at line 2, column 25: invalid character '}' looking for beginning of value\n"},
		{"unknown service", []string{"serve", "--only", "firestore,nope"}, 2,
			"loupe: --only: unknown service \"nope\" (known: firestore, database, auth, storage, pubsub, messaging, functions, hosting)\n"},
		{"taken port", []string{"serve", "--port", takenPort, "--in-memory", "--config", emptyConfig}, 1,
			"loupe: port " + takenPort + " is already in use on 127.0.0.1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := runLoupe(t, tc.args...)
			if code != tc.wantCode || stderr != tc.wantErr {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr %q", code, stderr, tc.wantCode, tc.wantErr)
			}
		})
	}
}

func mustPort(t *testing.T, hostPort string) int {
	_, p, err := net.SplitHostPort(hostPort)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(p)
	return port
}

// signUpStatus signs up an e-mail account at base and returns the HTTP status.
func signUpStatus(t *testing.T, base, email string) int {
	t.Helper()
	code, _ := loupetest.Call(t, "POST", base+"/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
		`{"email":"`+email+`","password":"secret1","returnSecureToken":true}`)
	return code
}

// TestServe_TwoLoupesSideBySide runs two loupes on one firebase.json with
// different main ports: the first takes the official ports, the second warns
// about each one, naming port and service, and serves everything on its main
// port. --strict-ports makes a taken official port fatal, and a data dir in
// use is refused.
func TestServe_TwoLoupesSideBySide(t *testing.T) {
	// Every service's port is named (none left at its official default,
	// which another test or program may hold).
	ports := loupetest.FreePorts(t, 6)
	services := []string{"firestore", "auth", "storage", "hub", "database", "pubsub"}
	cfg := filepath.Join(t.TempDir(), "firebase.json")
	body := fmt.Sprintf(`{"emulators": {"firestore": {"port": %d}, "auth": {"port": %d}, "storage": {"port": %d}, "hub": {"port": %d}, "database": {"port": %d}, "pubsub": {"port": %d}, "ui": {"enabled": false}}}`, ports[0], ports[1], ports[2], ports[3], ports[4], ports[5])
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := []string{"TMPDIR=" + t.TempDir()} // where the hub's locator file goes
	first := loupetest.Start(t, loupetest.Options{Config: cfg, Env: tmp})
	second := loupetest.Start(t, loupetest.Options{Config: cfg, InMemory: true, Env: tmp})
	for i, name := range services {
		want := fmt.Sprintf("port %d for %s is not available; %s answers on the main port %d only", ports[i], name, name, mustPort(t, second.Host))
		if !strings.Contains(second.Log(), want) {
			t.Errorf("second loupe's log lacks %q:\n%s", want, second.Log())
		}
		if strings.Contains(first.Log(), "is not available") {
			t.Errorf("first loupe warned:\n%s", first.Log())
		}
	}
	// Each hub reports where its services answer.
	for _, tc := range []struct {
		inst *loupetest.Instance
		want int
	}{{first, ports[1]}, {second, mustPort(t, second.Host)}} {
		_, emulators := loupetest.Call(t, "GET", tc.inst.URL+"/emulators", "")
		if auth, _ := emulators["auth"].(map[string]any); auth["port"] != float64(tc.want) {
			t.Errorf("%s/emulators: auth at %v, want port %d", tc.inst.URL, emulators["auth"], tc.want)
		}
	}
	authPort := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	for _, base := range []string{authPort, second.URL} {
		if code := signUpStatus(t, base, "same@side.test"); code != 200 {
			t.Errorf("sign-up at %s: HTTP %d, want 200 (each loupe has its own accounts)", base, code)
		}
	}
	if code := signUpStatus(t, first.URL, "same@side.test"); code != 400 {
		t.Errorf("second sign-up at the first loupe's main port: HTTP %d, want 400 EMAIL_EXISTS", code)
	}

	code, stderr := runLoupe(t, "serve", "--port", "0", "--in-memory", "--config", cfg, "--strict-ports")
	if want := fmt.Sprintf("loupe: firestore: port %d is already in use on 127.0.0.1", ports[0]); code != 1 || !strings.HasPrefix(stderr, want) {
		t.Errorf("--strict-ports: exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
	code, stderr = runLoupe(t, "serve", "--port", "0", "--data-dir", first.DataDir, "--config", cfg)
	if want := "loupe: data dir " + first.DataDir + " is in use by another loupe"; code != 1 || !strings.HasPrefix(stderr, want) {
		t.Errorf("a second loupe on the first's data dir: exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
}

func TestServe_PrintEnv(t *testing.T) {
	cmd := exec.Command(loupetest.Binary(t), "serve", "--print-env", "--port", "9001", "--project", "demo-side", "--only", "firestore,storage")
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = t.TempDir() // no firebase.json here nor above (serve looks up the folders for one)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := `export FIRESTORE_EMULATOR_HOST='127.0.0.1:9001'
export FIREBASE_FIRESTORE_EMULATOR_ADDRESS='127.0.0.1:9001'
export FIREBASE_STORAGE_EMULATOR_HOST='127.0.0.1:9001'
export STORAGE_EMULATOR_HOST='http://127.0.0.1:9001'
export FIREBASE_EMULATOR_HUB='127.0.0.1:9001'
export GCLOUD_PROJECT='demo-side'
export FIREBASE_CONFIG='{"databaseURL":"https://demo-side.firebaseio.com","projectId":"demo-side","storageBucket":"demo-side.appspot.com"}'
`
	if string(out) != want {
		t.Errorf("--print-env printed\n%s\nwant\n%s", out, want)
	}
}
