// Package functions runs the project's Go functions locally as Cloud Run
// and Eventarc would: loupe serve builds the functions module named by
// firebase.json's functions.source, starts it on a free port, delivers every
// Firestore commit to its triggers (declared in <source>/triggers.json) as
// CloudEvents, and routes hosting rewrites to it. The functions process gets
// the emulator host variables, so it reaches loupe through the Admin SDK as
// it would reach Firebase in production.
//
// Start-up does not wait for the build: /emulator/v1/functions tells whether
// the process is building, running or failed, and events committed before it
// runs are delivered once it does.
package functions

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/triggers"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/loupe-dev/loupe/internal/httpjson"
)

// trigger is one entry of triggers.json.
type trigger struct {
	Name      string `json:"name"`
	EventType string `json:"eventType"`
	Document  string `json:"document"`
	Path      string `json:"path"`
}

// Service is the functions service of loupe serve.
type Service struct {
	// ExtraEnv, set before Open, is added to the functions process's
	// environment (after loupe's own emulator variables).
	ExtraEnv func() []string

	env      server.Env
	source   string
	engine   *firestore.Engine
	loupeURL func() string

	mu       sync.Mutex
	state    string // building, running, failed
	log      processLog
	detail   string
	base     *url.URL
	cmd      *exec.Cmd
	dispatch *triggers.Dispatcher
	// settled is closed when state leaves "building".
	settled    chan struct{}
	settleOnce sync.Once
	queued     []triggers.Event
	unsub      func()
	// stop cancels the build and asks the process to stop; started is
	// closed when start has returned.
	stop    context.CancelFunc
	started chan struct{}
}

// New builds the service for the functions module at source (relative to
// the config file). loupeURL returns loupe's own base URL once it listens.
func New(env server.Env, source string, engine *firestore.Engine, loupeURL func() string) *Service {
	return &Service{env: env, source: env.Config.Path(source), engine: engine, loupeURL: loupeURL, state: "building",
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
		body := map[string]any{"state": s.state, "detail": s.detail, "paused": !s.dispatch.Enabled(), "events": s.dispatch.Log()}
		if s.base != nil {
			body["url"] = s.base.String()
		}
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

// Resolve is the hosting rewrite resolver: every function and Cloud Run
// service name maps to the one functions process.
func (s *Service) Resolve(string) (*url.URL, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base, s.base != nil
}

// Open implements server.Opener: it subscribes to commits and starts the
// build and the process in the background.
func (s *Service) Open(context.Context) error {
	s.unsub = s.engine.Subscribe(s.onCommit)
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.started = cancel, make(chan struct{})
	go func() {
		defer close(s.started)
		s.start(ctx)
	}()
	return nil
}

// stopGrace is how long the functions process (or its build) has to exit
// when asked before it is killed (Cloud Run gives a container 10 s).
const stopGrace = 3 * time.Second

// Close implements server.Closer: it stops the build (SIGINT to go build and
// the tools it runs) or the process (SIGTERM), kills what is left after
// stopGrace, and waits for it to exit.
func (s *Service) Close() error {
	if s.unsub != nil {
		s.unsub()
	}
	if s.stop != nil {
		s.stop()
		<-s.started
	}
	s.dispatch.Close()
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd != nil {
		_ = cmd.Wait()
	}
	return nil
}

func (s *Service) fail(err error) {
	s.mu.Lock()
	s.state, s.detail = "failed", err.Error()
	s.mu.Unlock()
	s.settle()
	s.env.Logger.Error("functions are not running", "err", err)
}

func (s *Service) start(ctx context.Context) {
	var file struct {
		Triggers []trigger `json:"triggers"`
	}
	data, err := os.ReadFile(filepath.Join(s.source, "triggers.json"))
	if err == nil {
		err = json.Unmarshal(data, &file)
	}
	if err != nil && !os.IsNotExist(err) {
		s.fail(fmt.Errorf("triggers.json: %w", err))
		return
	}
	dir, err := os.MkdirTemp("", "loupe-functions-")
	if err != nil {
		s.fail(err)
		return
	}
	// The binary goes once the process runs it (or could not start): however
	// loupe ends, nothing is left in the temporary folder (Windows, which
	// keeps a running binary, aside).
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "functions")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/functions")
	build.Dir = s.source
	dieWithParent(build)
	interruptGroup(build)
	build.WaitDelay = stopGrace
	if out, err := build.CombinedOutput(); err != nil {
		s.fail(fmt.Errorf("go build in %s: %v\n%s", s.source, err, out))
		return
	}
	port, err := freePort()
	if err != nil {
		s.fail(err)
		return
	}
	host := strings.TrimPrefix(s.loupeURL(), "http://")
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "HOST=127.0.0.1", "GOOGLE_CLOUD_PROJECT="+s.env.ProjectID,
		"FIRESTORE_EMULATOR_HOST="+host, "FIREBASE_AUTH_EMULATOR_HOST="+host, "STORAGE_EMULATOR_HOST="+host,
		"FCM_ENDPOINT=http://"+host+"/v1")
	if s.ExtraEnv != nil {
		cmd.Env = append(cmd.Env, s.ExtraEnv()...)
	}
	cmd.Stdout, cmd.Stderr = s.log.writer("stdout", os.Stderr), s.log.writer("stderr", os.Stderr)
	dieWithParent(cmd)
	// Close cancels ctx: the process gets SIGTERM, and Wait kills it after stopGrace.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	if err := cmd.Start(); err != nil {
		s.fail(err)
		return
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	base, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(port))
	if err := waitListening(ctx, base.Host); err != nil {
		s.fail(err)
		return
	}
	var ts []triggers.Trigger
	for _, t := range file.Triggers {
		ts = append(ts, triggers.Trigger{Name: t.Name, EventType: t.EventType, Document: t.Document, URL: base.String() + t.Path})
	}
	if err := s.dispatch.SetTriggers(ts); err != nil {
		s.fail(err)
		return
	}
	s.mu.Lock()
	s.base, s.state = base, "running"
	queued := s.queued
	s.queued = nil
	s.mu.Unlock()
	s.settle()
	s.dispatch.Publish(queued...)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitListening(ctx context.Context, hostport string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", hostport, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("the functions process did not listen on %s", hostport)
}

// onCommit turns a commit into events; before the process runs they wait.
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
	if s.state != "running" {
		if s.state == "building" {
			s.queued = append(s.queued, events...)
		}
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.dispatch.Publish(events...)
}

func splitDatabase(db string) (project, database string) {
	parts := strings.Split(db, "/")
	if len(parts) == 4 {
		return parts[1], parts[3]
	}
	return "", ""
}
