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

// deliveryClient carries deliveries and calls to the workers; its timeout
// is Cloud Functions' longest (540 s) with room to answer.
var deliveryClient = &http.Client{Timeout: 10 * time.Minute}

// functionURL splits /{project}/{region}/{name}[/rest] into the function it
// names (an onRequest or onCall function of a running codebase, in that
// region) and the rest of the path.
func (s *Service) functionURL(path string) (c *codebase, f Function, rest string, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 4)
	if len(parts) < 3 || parts[0] == "" {
		return nil, Function{}, "", false
	}
	c, f, ok = s.lookup(parts[2])
	if !ok || (f.Kind != KindHTTPS && f.Kind != KindCallable) || !slices.Contains(f.Regions, parts[1]) {
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

// serveFunction proxies a request to /{project}/{region}/{name}/rest to the
// function's worker, which sees the path /rest as the function does in
// production.
func (s *Service) serveFunction(w http.ResponseWriter, r *http.Request) {
	c, f, rest, ok := s.functionURL(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	p, release, ok := c.acquire()
	if !ok {
		http.Error(w, fmt.Sprintf("function %s is not running (its codebase %s is not running)", f.Name, c.name), http.StatusServiceUnavailable)
		return
	}
	defer release()
	s.count(c.name, f.Name)
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = rest, ""
	rp := httputil.NewSingleHostReverseProxy(httpBase(p, f))
	rp.ModifyResponse = server.OwnCORS // an onCall function sets CORS headers too
	rp.ServeHTTP(w, r2)
}
