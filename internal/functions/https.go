package functions

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"slices"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/server"
)

// deliveryClient carries deliveries and calls to the workers, with the
// run's execution id; its timeout is Cloud Functions' longest (540 s) with
// room to answer.
var deliveryClient = &http.Client{Timeout: 10 * time.Minute, Transport: executionTransport{http.DefaultTransport}}

// functionURL splits /{project}/{region}/{name}[/rest] into the function it
// names (an onRequest or onCall function of a running codebase, in that
// region) and the rest of the path. Go functions are reached through
// hosting rewrites only, as Cloud Run services are.
func (s *Service) functionURL(path string) (c *codebase, f Function, rest string, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 4)
	if len(parts) < 3 || parts[0] == "" {
		return nil, Function{}, "", false
	}
	c, f, ok = s.lookup(parts[2])
	if !ok || (f.Kind != KindHTTPS && f.Kind != KindCallable) || f.Platform == "run" || !slices.Contains(f.Regions, parts[1]) {
		return nil, Function{}, "", false
	}
	if len(parts) == 4 {
		rest = parts[3]
	}
	return c, f, "/" + rest, true
}

func (s *Service) isFunctionURL(r *http.Request) bool {
	_, _, _, ok := s.functionURL(r.URL.Path)
	return ok
}

// serveFunction serves a request to /{project}/{region}/{name}/rest: the
// function's worker sees the path /rest, as the function does in
// production.
func (s *Service) serveFunction(w http.ResponseWriter, r *http.Request) {
	c, f, rest, ok := s.functionURL(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = rest, ""
	if !s.forward(w, r2, c, f) {
		http.Error(w, fmt.Sprintf("function %s is not running (its codebase %s is not running)", f.Name, c.name), http.StatusServiceUnavailable)
	}
}

// Serve is how hosting rewrites and the Stripe stand-in's webhooks reach
// a function: it forwards r, at its own path, to the worker serving the
// function or Cloud Run service called name (a Go codebase serves any name
// its functions do not claim, as one Cloud Run service for every route) and
// records the run. It writes nothing and returns false while no worker
// serves the name.
func (s *Service) Serve(w http.ResponseWriter, r *http.Request, name string) bool {
	c, f, found := s.lookup(name)
	if !found {
		for _, cb := range s.codebases {
			if cb.runtime.Name() == "go" {
				c, found = cb, true
				f = cb.servedAt(r.URL.Path, name)
				break
			}
		}
	}
	return found && s.forward(w, r, c, f)
}

// forward proxies r to the worker of codebase c serving f, holding the
// worker until the answer is written (a worker being replaced keeps
// serving until then), as one run of f with its execution id. It writes
// nothing and returns false while c has no worker.
func (s *Service) forward(w http.ResponseWriter, r *http.Request, c *codebase, f Function) bool {
	p, release, ok := c.acquire()
	if !ok {
		return false
	}
	defer release() // also when the proxy aborts the response with a panic
	run := s.runs.begin(c.name, f.Name)
	sw := &statusWriter{ResponseWriter: w}
	defer func() { s.runs.end(run, sw.status, nil) }()
	r = r.Clone(withRun(r.Context(), run))
	r.Header.Set(executionHeader, run.ID)
	rp := httputil.NewSingleHostReverseProxy(httpBase(p, f))
	rp.ModifyResponse = server.OwnCORS // an onCall function sets CORS headers too
	rp.ServeHTTP(sw, r)
	return true
}

// statusWriter remembers the status of the answer written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer (the
// proxy flushes streamed answers through it).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
