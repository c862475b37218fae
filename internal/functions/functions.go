// Package functions runs a project's Cloud Functions locally, as Cloud
// Functions, Cloud Run and Eventarc would, in whatever runtime each codebase
// of firebase.json's functions block is written in: the runtime table
// (runtime.go; golang.go, node.go, runtime_python.go) builds each codebase, asks its
// SDK which functions it holds (never parsing its source), starts one worker
// process per codebase and supervises it (supervise.go: an exit is
// restarted with a backoff, a change to the source is rebuilt and swapped in,
// watch.go).
//
// Event functions are declared in the one trigger table (internal/triggers),
// which every event source publishes to: the Firestore engine's commits (this
// package subscribes to them), and the Auth, Storage, Pub/Sub, Realtime
// Database, schedule and task-queue sources through Publish. HTTP functions
// (onRequest, onCall) answer at /{project}/{region}/{name} on the functions
// port and the main port, and hosting rewrites reach them through Serve;
// Auth's blocking functions are called through Blocking.
//
// Start-up does not wait for the builds: /emulator/v1/functions tells whether
// each codebase is building, running, exited or failed, and events published
// before a codebase first runs are delivered to it once it does. Every worker
// gets the emulator host variables, FIREBASE_CONFIG and its codebase's .env
// files, so the Admin SDKs reach loupe as they would reach Firebase.
package functions

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/triggers"
	"google.golang.org/protobuf/encoding/protojson"
)

// Service is the functions service of loupe serve.
type Service struct {
	// ExtraEnv, set before Open, is added to every worker's environment
	// (after loupe's own emulator variables).
	ExtraEnv func() []string
	// EmulatorHosts, set before Open, are the variables that lead the SDKs
	// to loupe's services (KEY=VALUE: each running service's
	// *_EMULATOR_HOST, FIREBASE_EMULATOR_HUB), the ones `loupe exec` gives
	// its command; nil gives every service at loupe's URL.
	EmulatorHosts func() []string
	// DatabaseHost, set before Open when loupe serves the Realtime Database,
	// is its host:port for the workers' FIREBASE_DATABASE_EMULATOR_HOST.
	DatabaseHost func() string
	// EnsureTopics, set before Open, creates the Pub/Sub topics a codebase's
	// functions listen on (their topic triggers, and each scheduled
	// function's firebase-schedule-… topic), as firebase-tools' functions
	// emulator creates them, so that publishing to them works at once.
	EnsureTopics func(project string, topics []string) error
	// RunSchedules, set before Open, runs scheduled functions on their
	// schedules (--run-schedules); they always run on demand.
	RunSchedules bool
	// PublicURL, set before Open, is the base URL the start-up log gives
	// for HTTP functions (the functions' own port, as firebase-tools');
	// nil means loupe's main URL.
	PublicURL func() string

	env      server.Env
	engine   *firestore.Engine
	loupeURL func() string

	codebases []*codebase
	table     *triggers.Table
	log       *processLog
	// settled is closed once every codebase runs or has failed to start.
	settled chan struct{}
	unsub   func()
	// stop ends the codebases' supervisors; done is closed when they have
	// returned and every worker has exited.
	stop context.CancelFunc
	done chan struct{}

	tasks taskQueue

	// runs records every invocation of every function.
	runs *runLog
}

// New builds the service for the codebases of firebase.json's functions
// block. engine, when not nil, feeds Firestore triggers; loupeURL returns
// loupe's own base URL once it listens. A codebase whose runtime cannot be
// told is an error.
func New(env server.Env, engine *firestore.Engine, loupeURL func() string) (*Service, error) {
	runs := newRunLog()
	runs.log = &processLog{logger: env.Logger, runs: runs}
	s := &Service{env: env, engine: engine, loupeURL: loupeURL, log: runs.log,
		table: triggers.New(triggers.Options{Logger: env.Logger}), settled: make(chan struct{}), runs: runs}
	for _, cb := range env.Config.Functions {
		source := env.Config.Path(cb.Source)
		rt, err := runtimeFor(cb, source)
		if err != nil {
			return nil, err
		}
		s.codebases = append(s.codebases, newCodebase(s, cb, rt, source))
	}
	return s, nil
}

// Settled is closed once every codebase runs or has failed to start.
func (s *Service) Settled() <-chan struct{} { return s.settled }

// Table is the trigger table, which event sources publish to.
func (s *Service) Table() *triggers.Table { return s.table }

// Name implements server.Service.
func (s *Service) Name() string { return "functions" }

// Register implements server.Service.
func (s *Service) Register(r *server.Routes) {
	r.Admin("GET /emulator/v1/functions", s.status)
	r.Admin("GET /emulator/v1/functions/events", s.events)
	r.Admin("GET /emulator/v1/functions/logs", s.logs)
	r.Admin("GET /emulator/v1/functions/runs", s.listRuns)
	r.Admin("PUT /emulator/v1/functions/backgroundTriggers", s.backgroundTriggers)
	r.Admin("POST /emulator/v1/functions/{name}/run", s.runNow)
	r.HTTP.HandleFunc("POST /projects/{project}/locations/{location}/queues/{queue}/tasks", s.enqueueTask)
	r.HTTP.HandleFunc("DELETE /projects/{project}/locations/{location}/queues/{queue}/tasks/{id}", s.deleteTask)
	r.HTTP.HandleFunc("POST /projects/{project}/locations/{location}/channels/{channel}", s.publishEvents)
	r.HTTP.HandleFunc("POST /v1/projects/{project}/locations/{location}/channels/{channel}", s.publishEvents)
	r.HTTP.HandleFunc("POST /google/publishEvents", s.publishNativeEvents)
	r.Fallback(s.isFunctionURL, http.HandlerFunc(s.serveFunction))
}

// State is the least healthy codebase's state (running, building, exited
// or failed) and what it says went wrong, naming the codebase when there are
// several; running with no codebase.
func (s *Service) State() (state, detail string) {
	state, worst := "running", 0
	for _, c := range s.codebases {
		c.mu.Lock()
		st := c.st
		c.mu.Unlock()
		if rank := slices.Index(stateRank, st.State); rank > worst {
			worst, state, detail = rank, st.State, st.Detail
			if len(s.codebases) > 1 {
				detail = strings.TrimSpace("codebase " + c.name + ": " + detail)
			}
		}
	}
	return state, detail
}

// stateRank orders codebase states from the healthiest.
var stateRank = []string{"running", "building", "exited", "failed"}

// status answers GET /emulator/v1/functions: the state of the codebases
// (the top level is the least healthy one's, so a single codebase's state
// reads as before), every function, the pause switch and the deliveries.
func (s *Service) status(w http.ResponseWriter, _ *http.Request) {
	type codebaseStatus struct {
		Name    string `json:"name"`
		Runtime string `json:"runtime"`
		Source  string `json:"source"`
		status
	}
	type functionStatus struct {
		Function
		URL string `json:"url,omitempty"`
		runStats
	}
	body := struct {
		status
		Codebases []codebaseStatus   `json:"codebases"`
		Functions []functionStatus   `json:"functions"`
		Paused    bool               `json:"paused"`
		Events    []triggers.Attempt `json:"events"`
	}{Codebases: []codebaseStatus{}, Functions: []functionStatus{}, Paused: !s.table.Enabled(), Events: s.table.Log()}
	worst := -1
	for _, c := range s.codebases {
		c.mu.Lock()
		st := c.st
		c.mu.Unlock()
		body.Codebases = append(body.Codebases, codebaseStatus{Name: c.name, Runtime: c.runtime.Name(), Source: c.config.Source, status: st})
		if rank := slices.Index(stateRank, st.State); rank > worst {
			worst, body.status = rank, st
		}
		for _, f := range c.functions() {
			fs := functionStatus{Function: f, runStats: s.runs.summary(c.name, f.Name)}
			if (f.Kind == KindHTTPS || f.Kind == KindCallable) && f.Platform != "run" {
				fs.URL = s.loupeURL() + "/" + s.env.ProjectID + "/" + f.region() + "/" + f.Name
			}
			body.Functions = append(body.Functions, fs)
		}
	}
	httpjson.Write(w, http.StatusOK, body)
}

// events answers {"events": [...]}: the delivery log, oldest first, narrowed
// by the optional query parameters trigger, resource (exact names; document
// is the same as resource) and failed=true (only attempts that did not
// deliver).
func (s *Service) events(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	failedOnly, err := strconv.ParseBool(cmp.Or(q.Get("failed"), "false"))
	if err != nil {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "failed must be true or false"))
		return
	}
	resource := cmp.Or(q.Get("resource"), q.Get("document"))
	shown := []triggers.Attempt{}
	for _, a := range s.table.Log() {
		if (q.Has("trigger") && a.Trigger != q.Get("trigger")) || (resource != "" && a.Resource != resource) ||
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

// SetBackgroundTriggers turns background triggers on or off for every
// source and runtime: the Emulator Hub's enableBackgroundTriggers and
// disableBackgroundTriggers and the console's switch drive this one state
// (triggers.Table.Disable says which events a pause drops). Turning them off
// returns once the deliveries already queued are done, after flushTimeout,
// or when ctx ends.
func (s *Service) SetBackgroundTriggers(ctx context.Context, on bool) {
	if on {
		s.table.Enable()
		return
	}
	ctx, cancel := context.WithTimeout(ctx, flushTimeout)
	defer cancel()
	if err := s.table.Disable(ctx); err != nil {
		s.env.Logger.Warn("background triggers are off, but deliveries queued before are still under way", "err", err)
	}
}

// BackgroundTriggersEnabled reports whether background triggers are on.
func (s *Service) BackgroundTriggersEnabled() bool { return s.table.Enabled() }

// lookup finds the function called name in the latest builds.
func (s *Service) lookup(name string) (*codebase, Function, bool) {
	for _, c := range s.codebases {
		for _, f := range c.functions() {
			if f.Name == name {
				return c, f, true
			}
		}
	}
	return nil, Function{}, false
}

// Open implements server.Opener: it subscribes to commits and starts
// building and supervising every codebase in the background.
func (s *Service) Open(context.Context) error {
	if s.engine != nil {
		s.unsub = s.engine.Subscribe(s.onCommit)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.done = cancel, make(chan struct{})
	if s.RunSchedules {
		s.startScheduler(ctx, wallClock{})
	}
	var wg sync.WaitGroup
	for _, c := range s.codebases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.run(ctx)
		}()
	}
	go func() {
		for _, c := range s.codebases {
			select {
			case <-c.settled:
			case <-ctx.Done():
				return
			}
		}
		close(s.settled)
	}()
	go func() {
		wg.Wait()
		close(s.done)
	}()
	return nil
}

// Close implements server.Closer: it stops the builds under way (SIGINT to
// the build and the tools it runs) and the workers (SIGTERM, then a kill
// after stopGrace), and waits for them to exit.
func (s *Service) Close() error {
	if s.unsub != nil {
		s.unsub()
	}
	if s.stop != nil {
		s.stop()
		<-s.done
	}
	s.tasks.stop()
	s.table.Close()
	return nil
}

// Publish hands events of a source to the trigger table: a codebase still
// on its first build gets them once it runs; one whose build failed does
// not get them.
func (s *Service) Publish(events ...triggers.Event) {
	for _, c := range s.codebases {
		c.offer(events)
	}
	s.table.Publish(events...)
	s.runScheduledByTopic(events)
}

// onCommit turns a Firestore commit into events of the trigger table; an
// import's commits fire nothing (an archive is restored as it was).
func (s *Service) onCommit(c firestore.Commit) {
	if c.Import {
		return
	}
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
		kind := triggers.Updated
		switch {
		case ch.Old == nil:
			kind = triggers.Created
		case ch.New == nil:
			kind = triggers.Deleted
		}
		events = append(events, triggers.Event{
			ID:     fmt.Sprintf("%d-%d", c.Time.UnixNano(), i),
			Source: triggers.Firestore, Types: []string{kind, triggers.Written},
			Project: project, Instance: database, Resource: ch.Path, Time: c.Time, Data: body,
			Auth: committer(c.Caller, project),
		})
	}
	s.Publish(events...)
}

// committer is who made a Firestore commit as the …WithAuthContext
// triggers' authtype and authid tell it: the Admin SDKs (the owner) are
// the functions' service account, a signed-in user's uid is the id of an
// "unknown" principal (production has no type of its own for them), a
// request with no credential is "unauthenticated", and loupe's own changes
// (a clear, an import) are the "system".
func committer(caller *identity.Principal, project string) *triggers.Principal {
	switch {
	case caller == nil:
		return &triggers.Principal{Type: "system"}
	case caller.Owner:
		return &triggers.Principal{Type: "service_account", ID: project + "@appspot.gserviceaccount.com"}
	case caller.Authenticated():
		return &triggers.Principal{Type: "unknown", ID: caller.UID, Token: caller.Claims}
	}
	return &triggers.Principal{Type: "unauthenticated"}
}

func splitDatabase(db string) (project, database string) {
	parts := strings.Split(db, "/")
	if len(parts) == 4 {
		return parts[1], parts[3]
	}
	return "", ""
}
