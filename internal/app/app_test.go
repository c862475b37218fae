package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/rates"
	"github.com/loupe-dev/loupe/internal/stripe"
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
	// The hub, the console and the request log always run: they show
	// whichever services do.
	if len(body.Services) != 4 || body.Services["auth"] != "ready" || body.Services["hub"] != "ready" || body.Services["console"] != "ready" ||
		body.Services["requests"] != "ready" {
		t.Errorf("healthz services = %v, want only auth, the hub, the console and the request log", body.Services)
	}
}

// TestApp_OutsideServicesComeFromOptions: with a Stripe key and a rate
// service in Options, loupe runs neither stand-in and gives the functions
// the operator's values; without them it runs both and gives the functions
// their addresses. Nothing is read from loupe's own environment.
func TestApp_OutsideServicesComeFromOptions(t *testing.T) {
	t.Setenv("STRIPE_SECRET_KEY", "sk_from_the_environment")
	t.Setenv("RATES_UPSTREAM_URL", "http://environment.invalid/")
	source := t.TempDir()
	if err := os.WriteFile(filepath.Join(source, "package.json"), []byte(`{"main": "index.js"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "firebase.json")
	data, _ := json.Marshal(map[string]any{"functions": map[string]string{"source": source}})
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	services := func(o Options) map[string]string {
		o.Host, o.InMemory, o.Config, o.Project = "127.0.0.1", true, cfg, "demo-app"
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		a, err := New(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		var body struct{ Services map[string]string }
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		return body.Services
	}
	own := Options{StripeSecretKey: "sk_test_operator", RatesUpstreamURL: "https://rates.example/v4/latest/"}
	got := services(own)
	if _, ok := got["functions"]; !ok {
		t.Fatalf("services = %v: the functions do not run, the test checks nothing", got)
	}
	for _, name := range []string{"stripe", "rates"} {
		if _, ok := got[name]; ok {
			t.Errorf("with the operator's %s, loupe still runs its stand-in (services %v)", name, got)
		}
	}
	env := strings.Join(outsideEnv(&own, "http://127.0.0.1:9"), " ")
	if env != "STRIPE_SECRET_KEY=sk_test_operator RATES_UPSTREAM_URL=https://rates.example/v4/latest/" {
		t.Errorf("the functions' environment = %q, want the operator's key and rate service", env)
	}

	got = services(Options{})
	for _, name := range []string{"stripe", "rates"} {
		if _, ok := got[name]; !ok {
			t.Errorf("without the operator's %s, loupe runs no stand-in (services %v)", name, got)
		}
	}
	env = strings.Join(outsideEnv(&Options{}, "http://127.0.0.1:9"), " ")
	for _, want := range []string{"STRIPE_SECRET_KEY=" + stripe.SecretKey, "STRIPE_API_BASE=http://127.0.0.1:9", "RATES_UPSTREAM_URL=http://127.0.0.1:9" + rates.Path} {
		if !strings.Contains(env, want) {
			t.Errorf("the functions' environment %q lacks %s", env, want)
		}
	}
}
