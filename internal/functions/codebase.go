package functions

import (
	"cmp"
	"context"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/triggers"
)

// codebase is one entry of firebase.json's functions: a folder in one
// runtime, built, run in a worker process and supervised (supervise.go).
type codebase struct {
	svc     *Service
	name    string
	source  string // absolute folder
	config  config.Codebase
	runtime Runtime
	logger  *slog.Logger
	log     *processLog

	mu sync.Mutex
	st status
	// serving is the worker HTTP requests go to; nil while none runs.
	serving *process
	// settled is closed when state leaves "building".
	settled    chan struct{}
	settleOnce sync.Once
	// queued are the events that came before the first worker ran.
	queued []triggers.Event
	// fns are the functions of the latest build that ran.
	fns []Function
	// reported is the latest build whose functions were logged.
	reported Build
}

func newCodebase(svc *Service, cb config.Codebase, rt Runtime, source string) *codebase {
	return &codebase{svc: svc, name: cb.Name(), source: source, config: cb, runtime: rt,
		logger: svc.env.Logger.With("codebase", cb.Name(), "runtime", rt.Name()),
		log:    svc.log, st: status{State: "building"}, settled: make(chan struct{})}
}

// settle records the end of building, once.
func (c *codebase) settle() { c.settleOnce.Do(func() { close(c.settled) }) }

// offer queues events that came before the first worker ran; later ones
// reach the worker through the table.
func (c *codebase) offer(events []triggers.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st.State == "building" {
		c.queued = append(c.queued, events...)
	}
}

// compile builds the codebase with its runtime and records the build's state.
func (c *codebase) compile(ctx context.Context) (Build, error) {
	c.mu.Lock()
	c.st.Build = buildInfo{State: "building", At: time.Now().UTC()}
	c.mu.Unlock()
	b, err := c.runtime.Build(ctx, c)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// closeBuild releases b, if any.
func closeBuild(b Build) {
	if b != nil {
		b.Close()
	}
}

// acquire holds the running worker for one request and returns its base
// URL; ok is false while none runs.
func (c *codebase) acquire() (p *process, release func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p = c.serving
	if p == nil {
		return nil, nil, false
	}
	p.requests.Add(1)
	return p, sync.OnceFunc(p.requests.Done), true
}

// functions lists the functions of the latest build that ran, and the HTTP
// functions its worker announced.
func (c *codebase) functions() []Function {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.serving == nil || len(c.serving.announced) == 0 {
		return c.fns
	}
	return append(slices.Clip(c.fns), c.serving.announced...)
}

// announcer is a build whose worker names in its output the HTTP functions
// it serves (functions-framework-go's start-up lines): the one discovery of
// a Go codebase's HTTP functions, which no manifest declares.
type announcer interface {
	// Announced returns the HTTP function a line of the worker announces.
	Announced(line string) (Function, bool)
}

// announce records the HTTP function of p that line announces, if any, in
// the order of their names (the framework announces them in map order).
func (c *codebase) announce(p *process, line LogLine) {
	a, ok := p.build.(announcer)
	if !ok || line.Stream != "stdout" {
		return
	}
	f, ok := a.Announced(line.Text)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	i, found := slices.BinarySearchFunc(p.announced, f.Name, func(g Function, name string) int { return cmp.Compare(g.Name, name) })
	if !found {
		p.announced = slices.Insert(p.announced, i, f)
	}
}

// servedAt is the announced HTTP function of the serving worker whose path
// serves path, as functions-framework-go's mux picks it (the exact path, or
// the longest folder path ending in "/" above it); without one, the
// function called name (or path, when name is empty).
func (c *codebase) servedAt(path, name string) Function {
	c.mu.Lock()
	defer c.mu.Unlock()
	best := Function{Name: cmp.Or(name, strings.TrimPrefix(path, "/")), Codebase: c.name}
	if c.serving == nil {
		return best
	}
	for _, f := range c.serving.announced {
		ep := f.EntryPoint
		if (path == ep || (strings.HasSuffix(ep, "/") && strings.HasPrefix(path, ep))) && len(ep) > len(best.EntryPoint) {
			best = f
		}
	}
	return best
}

// httpBase is the URL under which the worker p serves the HTTP function f.
func httpBase(p *process, f Function) *url.URL {
	u := *p.base
	u.Path += p.build.HTTPPath(f)
	return &u
}
