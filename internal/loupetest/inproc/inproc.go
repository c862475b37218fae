// Package inproc runs loupe's services in the test process, over the
// composition root's handler (app.App.Handler) with no port and no child
// process, for fast scenario tables of HTTP calls. It sits beside
// loupetest, which runs `loupe serve` as the CLI does (flags, data dir,
// import, a real port): use that for what a user starts, this for request
// and answer shapes. It is its own package because it imports every
// service, which tests inside those services' packages cannot.
package inproc

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/app"
	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
)

// Options adjust the app a harness runs.
type Options struct {
	// Project is the default project; "" means demo-loupe.
	Project string
	// Config is a firebase.json path; "" means an empty configuration.
	Config string
	// Only names the services to run; empty means all.
	Only []string
	// StrictCredentials refuses the owner credential and unsigned tokens.
	StrictCredentials bool
}

// Harness is an app serving in memory in the test process.
type Harness struct {
	// Project is the default project id.
	Project string
	handler http.Handler
	app     *app.App
}

// Handler is the app's HTTP handler, for a test that needs headers Do does
// not send (serve it with httptest.NewServer).
func (h *Harness) Handler() http.Handler { return h.handler }

// Routes lists the HTTP patterns the app's services registered.
func (h *Harness) Routes() []server.Route { return h.app.Routes() }

// AdminToken is the app's admin credential: the strict mode's admin token,
// "owner" in local mode.
func (h *Harness) AdminToken() string { return h.app.Credentials().AdminToken() }

// UserToken is an ID token for uid of the default project, valid for an
// hour, as the app's Auth would mint it (signed in strict mode).
func (h *Harness) UserToken(uid string) string {
	now := time.Now().Unix()
	return h.app.Credentials().MintJWT(map[string]any{"sub": uid, "user_id": uid, "aud": h.Project,
		"iss": identity.Issuer(h.Project), "iat": now, "exp": now + 3600, "firebase": map[string]any{"sign_in_provider": "password"}})
}

// Start builds and opens an in-memory app and closes it when the test ends.
func Start(t testing.TB, opts Options) *Harness {
	t.Helper()
	if opts.Project == "" {
		opts.Project = "demo-loupe"
	}
	if opts.Config == "" {
		opts.Config = filepath.Join(t.TempDir(), "firebase.json")
		if err := os.WriteFile(opts.Config, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(opts.Config, true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Options{Project: opts.Project, Host: "127.0.0.1", InMemory: true, Config: cfg,
		Only: opts.Only, StrictCredentials: opts.StrictCredentials, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := a.Open(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := a.Close(); err != nil {
			t.Error(err)
		}
	})
	return &Harness{Project: opts.Project, handler: a.Handler(), app: a}
}

// Do serves one request: body is sent as it is, with contentType when not
// "" and bearer as the Authorization token when not "". It returns the
// answer's status and body.
func (h *Harness) Do(method, path, contentType, bearer, body string) (int, string) {
	// As a client of this machine calls it (httptest names example.com).
	req := httptest.NewRequest(method, "http://localhost"+path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// Probe sends method to path with bearer ("" for none) and a body of "{}"
// for methods that carry one, and returns the answer's status. A handler
// that streams (server-sent events, say) is ended once it has sent its
// header, so every route can be probed.
func (h *Harness) Probe(method, path, bearer string) int {
	body := ""
	if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		body = "{}"
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, method, "http://localhost"+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	rec := &headerOnce{ResponseRecorder: httptest.NewRecorder(), sent: cancel}
	h.handler.ServeHTTP(rec, req)
	return rec.Code
}

// headerOnce is a recorder that ends the request once the header is sent.
type headerOnce struct {
	*httptest.ResponseRecorder
	sent func()
}

func (w *headerOnce) WriteHeader(code int) {
	w.ResponseRecorder.WriteHeader(code)
	w.sent()
}

func (w *headerOnce) Write(b []byte) (int, error) {
	defer w.sent()
	return w.ResponseRecorder.Write(b)
}

// Step is one row of a scenario: a request and what its answer must be.
type Step struct {
	Name string
	// Method defaults to POST; ContentType to application/json when there
	// is a body.
	Method, Path, ContentType string
	// Bearer is the Authorization token, or "".
	Bearer string
	Body   string
	// Status is the answer's status; Contains are substrings of its body.
	Status   int
	Contains []string
}

// Run serves the steps in order, each a subtest, on the same app: a step
// sees what the steps before it did.
func (h *Harness) Run(t *testing.T, steps []Step) {
	t.Helper()
	for _, st := range steps {
		t.Run(st.Name, func(t *testing.T) {
			method, ct := st.Method, st.ContentType
			if method == "" {
				method = http.MethodPost
			}
			if ct == "" && st.Body != "" {
				ct = "application/json"
			}
			status, body := h.Do(method, st.Path, ct, st.Bearer, st.Body)
			if status != st.Status {
				t.Errorf("%s %s = %d %.300s, want %d", method, st.Path, status, body, st.Status)
			}
			for _, want := range st.Contains {
				if !strings.Contains(body, want) {
					t.Errorf("%s %s answer %.300s lacks %q", method, st.Path, body, want)
				}
			}
		})
	}
}
