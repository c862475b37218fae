package main

import (
	"encoding/json"
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
	inst := loupetest.Start(t, loupetest.Options{})
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
	inst := loupetest.Start(t, loupetest.Options{})
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
			"loupe: --only: unknown service \"nope\" (known: firestore, auth, storage, messaging, functions, hosting)\n"},
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
