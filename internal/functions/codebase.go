package functions

import (
	"context"
	"log/slog"
	"net/url"
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
	// announced is the latest build whose functions were logged.
	announced Build
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

// functions lists the functions of the latest build that ran.
func (c *codebase) functions() []Function {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fns
}

// httpBase is the URL under which the worker p serves the HTTP function f.
func httpBase(p *process, f Function) *url.URL {
	u := *p.base
	u.Path += p.build.HTTPPath(f)
	return &u
}
