// Package functions runs the project's Go functions locally as Cloud Run
// and Eventarc would: loupe serve builds the functions module named by
// firebase.json's functions.source, starts it on a free port, delivers every
// Firestore commit to its triggers (declared in <source>/triggers.json) as
// CloudEvents, and routes hosting rewrites to it. The functions process gets
// the emulator host variables, so it reaches loupe through the Admin SDK as
// it would reach Firebase in production.
//
// Start-up does not wait for the build: /emulator/v1/functions tells whether
// the process is building, running, exited or failed, and events committed
// before it first runs are delivered once it does. loupe supervises the
// process: one that exits is restarted with a backoff (supervise.go), and a
// change to the module's source is rebuilt and swapped in when it builds
// (watch.go).
package functions

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/triggers"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/loupe-dev/loupe/internal/httpjson"
)

// Service is the functions service of loupe serve.
type Service struct {
	// ExtraEnv, set before Open, is added to the functions process's
	// environment (after loupe's own emulator variables).
	ExtraEnv func() []string

	env      server.Env
	source   string
	engine   *firestore.Engine
	loupeURL func() string

	mu  sync.Mutex
	st  status
	log processLog
	// serving is the process hosting rewrites go to; nil while none runs.
	serving  *process
	dispatch *triggers.Dispatcher
	// settled is closed when state leaves "building".
	settled    chan struct{}
	settleOnce sync.Once
	queued     []triggers.Event
	unsub      func()
	// stop ends run: it cancels a build and stops the processes; done is
	// closed when run has returned and every process has exited.
	stop context.CancelFunc
	done chan struct{}
}

// New builds the service for the functions module at source (relative to
// the config file). loupeURL returns loupe's own base URL once it listens.
func New(env server.Env, source string, engine *firestore.Engine, loupeURL func() string) *Service {
	return &Service{env: env, source: env.Config.Path(source), engine: engine, loupeURL: loupeURL, st: status{State: "building"},
		dispatch: triggers.New(triggers.Options{Logger: env.Logger}), settled: make(chan struct{})}
}

// Settled is closed once the functions process runs or has failed to start.
func (s *Service) Settled() <-chan struct{} { return s.settled }

// settle records the end of building, once.
func (s *Service) settle() { s.settleOnce.Do(func() { close(s.settled) }) }

// Name implements server.Service.
func (s *Service) Name() string { return "functions" }

// Register implements server.Service.
func (s *Service) Register(r *server.Routes) {
	r.Admin("GET /emulator/v1/functions", func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		body := struct {
			status
			Paused bool               `json:"paused"`
			Events []triggers.Attempt `json:"events"`
		}{status: s.st, Paused: !s.dispatch.Enabled(), Events: s.dispatch.Log()}
		s.mu.Unlock()
		httpjson.Write(w, http.StatusOK, body)
	})
	r.Admin("GET /emulator/v1/functions/events", s.events)
	r.Admin("GET /emulator/v1/functions/logs", s.logs)
	r.Admin("PUT /emulator/v1/functions/backgroundTriggers", s.backgroundTriggers)
}

// events answers {"events": [...]}: the delivery log, oldest first, narrowed
// by the optional query parameters trigger, document (exact names) and
// failed=true (only attempts that did not deliver).
func (s *Service) events(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	failedOnly, err := strconv.ParseBool(cmp.Or(q.Get("failed"), "false"))
	if err != nil {
		httpjson.Write(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": http.StatusBadRequest,
			"message": "failed must be true or false", "status": "INVALID_ARGUMENT"}})
		return
	}
	shown := []triggers.Attempt{}
	for _, a := range s.dispatch.Log() {
		if (q.Has("trigger") && a.Trigger != q.Get("trigger")) || (q.Has("document") && a.Document != q.Get("document")) ||
			(failedOnly && a.Delivered) {
			continue
		}
		shown = append(shown, a)
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"events": shown})
}

// flushTimeout bounds how long turning background triggers off waits for
// the deliveries already queued, as firebase-tools bounds its flush.
const flushTimeout = 60 * time.Second

// SetBackgroundTriggers turns background triggers on or off: the Emulator
// Hub's enableBackgroundTriggers and disableBackgroundTriggers and the
// console's switch drive this one state (triggers.Dispatcher.Disable says
// which events a pause drops). Turning them off returns once the deliveries
// already queued are done, after flushTimeout, or when ctx ends.
func (s *Service) SetBackgroundTriggers(ctx context.Context, on bool) {
	if on {
		s.dispatch.Enable()
		return
	}
	ctx, cancel := context.WithTimeout(ctx, flushTimeout)
	defer cancel()
	if err := s.dispatch.Disable(ctx); err != nil {
		s.env.Logger.Warn("background triggers are off, but deliveries queued before are still under way", "err", err)
	}
}

// BackgroundTriggersEnabled reports whether background triggers are on.
func (s *Service) BackgroundTriggersEnabled() bool { return s.dispatch.Enabled() }

// Acquire is the hosting rewrite resolver (and where the Stripe stand-in
// sends webhooks): every function and Cloud Run service name maps to the one
// functions process. It returns that process's base URL and holds the
// process for one request: a process replaced meanwhile is stopped only once
// release has been called (retire). ok is false, and release nil, while no
// process runs.
func (s *Service) Acquire(string) (base *url.URL, release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.serving
	if p == nil {
		return nil, nil, false
	}
	p.requests.Add(1)
	return p.base, sync.OnceFunc(p.requests.Done), true
}

// Open implements server.Opener: it subscribes to commits and starts
// building and supervising the functions in the background.
func (s *Service) Open(context.Context) error {
	s.unsub = s.engine.Subscribe(s.onCommit)
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		s.run(ctx)
	}()
	return nil
}

// Close implements server.Closer: it stops a build under way (SIGINT to go
// build and the tools it runs) and the functions process (SIGTERM, then a
// kill after stopGrace), and waits for them to exit.
func (s *Service) Close() error {
	if s.unsub != nil {
		s.unsub()
	}
	if s.stop != nil {
		s.stop()
		<-s.done
	}
	s.dispatch.Close()
	return nil
}

// onCommit turns a commit into events; before the first process runs they
// wait, and while no build has ever succeeded they are dropped.
func (s *Service) onCommit(c firestore.Commit) {
	events := make([]triggers.Event, 0, len(c.Changes))
	for i, ch := range c.Changes {
		project, database := splitDatabase(ch.Database)
		data := map[string]json.RawMessage{}
		if ch.New != nil {
			data["value"], _ = protojson.Marshal(ch.New)
		}
		if ch.Old != nil {
			data["oldValue"], _ = protojson.Marshal(ch.Old)
		}
		body, _ := json.Marshal(data)
		events = append(events, triggers.Event{
			ID:      fmt.Sprintf("%d-%d", c.Time.UnixNano(), i),
			Project: project, Database: database, Document: ch.Path,
			Created: ch.Old == nil, Deleted: ch.New == nil, Time: c.Time, Data: body,
		})
	}
	s.mu.Lock()
	switch s.st.State {
	case "building":
		s.queued = append(s.queued, events...)
		s.mu.Unlock()
		return
	case "failed":
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	// While the process is down (exited), these fail at once and are retried.
	s.dispatch.Publish(events...)
}

func splitDatabase(db string) (project, database string) {
	parts := strings.Split(db, "/")
	if len(parts) == 4 {
		return parts[1], parts[3]
	}
	return "", ""
}
