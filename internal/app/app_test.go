package app

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/config"
)

// start builds and runs an app in memory on a free port until the test ends.
func start(t *testing.T, opts Options) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "firebase.json")
	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	opts.Host, opts.InMemory, opts.Config, opts.Project = "127.0.0.1", true, cfg, "demo-app"
	ctx, cancel := context.WithCancel(context.Background())
	a, err := New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	for {
		resp, err := http.Get(a.URL() + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return a.URL()
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestApp_StrictnessIsPerApp runs a local and a strict app in one process:
// each keeps its own credential policy, for Firestore reads and for the
// admin endpoints.
func TestApp_StrictnessIsPerApp(t *testing.T) {
	local := start(t, Options{})
	strict := start(t, Options{StrictCredentials: true})
	for _, tc := range []struct {
		base, method, path string
		want               int
	}{
		{local, "GET", "/v1/projects/demo-app/databases/(default)/documents/a/b", 404},
		{strict, "GET", "/v1/projects/demo-app/databases/(default)/documents/a/b", 401},
		{local, "DELETE", "/emulator/v1/projects/demo-app/databases/(default)/documents", 200},
		{strict, "DELETE", "/emulator/v1/projects/demo-app/databases/(default)/documents", 403},
	} {
		req, _ := http.NewRequest(tc.method, tc.base+tc.path, nil)
		req.Header.Set("Authorization", "Bearer owner")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s%s as the owner = %d, want %d", tc.method, tc.base, tc.path, resp.StatusCode, tc.want)
		}
	}
}

// TestApp_OnlyBuildsTheNamedServices: --only leaves the other services'
// routes unregistered.
func TestApp_OnlyBuildsTheNamedServices(t *testing.T) {
	base := start(t, Options{Only: []string{"auth"}})
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Services map[string]string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	// The hub and the console always run: they show whichever services do.
	if len(body.Services) != 3 || body.Services["auth"] != "ready" || body.Services["hub"] != "ready" || body.Services["console"] != "ready" {
		t.Errorf("healthz services = %v, want only auth, the hub and the console", body.Services)
	}
}
