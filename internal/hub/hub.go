// Package hub serves the Emulator Hub's HTTP API as firebase-tools serves it,
// so tools that find emulators through FIREBASE_EMULATOR_HUB or the hub's
// locator file (@firebase/rules-unit-testing, firebase emulators:export) find
// loupe's services:
//
//	GET  /emulators                            each running emulator: name, host, port, listen (pid, reservedPorts)
//	PUT  /functions/disableBackgroundTriggers  stop delivering Firestore events to functions
//	PUT  /functions/enableBackgroundTriggers   deliver them again
//	POST /_admin/export                        {"path", "initiatedBy", "targets"}: write an export
//	GET  /                                     (on the hub's own port) the locator
//
// The hub answers on every port of the server; only GET / is the hub port's
// alone, since on the others it is the app.
package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/server"
)

// Version is what the hub reports as its firebase-tools version.
const Version = "loupe"

// Emulator is one running emulator as GET /emulators describes it, in
// firebase-tools' EmulatorInfo fields.
type Emulator struct {
	Name string `json:"name"`
	// Host is the address to connect to (127.0.0.1 when listening on 0.0.0.0).
	Host string `json:"host"`
	Port int    `json:"port"`
	// PID is the process serving it; firebase-tools reports one only for
	// the emulators it runs as a child process (Firestore, the Realtime
	// Database and Pub/Sub among loupe's), and 0 leaves it out.
	PID int `json:"pid,omitempty"`
	// ReservedPorts are the emulator's other ports (Hosting's other
	// sites'); none leaves it out.
	ReservedPorts []int `json:"reservedPorts,omitempty"`
	// Listen is every address the emulator answers on.
	Listen []Listen `json:"listen"`
}

// Listen is one address an emulator answers on.
type Listen struct {
	Address string `json:"address"`
	Port    int    `json:"port"`
	Family  string `json:"family"`
}

// TriggerSwitch turns Firestore-triggered function delivery on and off.
type TriggerSwitch interface {
	// SetBackgroundTriggers turns delivery on or off; turning it off
	// returns once the deliveries already queued are done.
	SetBackgroundTriggers(ctx context.Context, on bool)
	BackgroundTriggersEnabled() bool
}

// Options are what the hub reports and acts on.
type Options struct {
	// Project names the locator file, as firebase-tools names it.
	Project string
	// TempDir is the temporary folder, where firebase-tools looks for the
	// locator file; "" means os.TempDir().
	TempDir string
	// Emulators lists the running emulators, the hub included; valid once
	// the server listens.
	Emulators func() []Emulator
	// OwnPort is the hub's own port, and false when it has none (then only
	// the routes on the other ports serve it, and no locator file is written).
	OwnPort func() (int, bool)
	// Triggers is nil when no functions run.
	Triggers TriggerSwitch
	// Export writes an export of the named services (all when nil) to dir.
	Export func(ctx context.Context, dir string, services []string) error
	Logger *slog.Logger
}

// Service is the Emulator Hub.
type Service struct {
	opts Options
	// locatorFile is the locator file this hub wrote, or "".
	locatorFile string
}

// New builds the hub.
func New(opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Service{opts: opts}
}

// Name implements server.Service.
func (s *Service) Name() string { return "hub" }

// Register implements server.Service.
func (s *Service) Register(r *server.Routes) {
	r.HTTP.HandleFunc("GET /emulators", s.emulators)
	r.Admin("PUT /functions/disableBackgroundTriggers", func(w http.ResponseWriter, r *http.Request) { s.setTriggers(w, r, false) })
	r.Admin("PUT /functions/enableBackgroundTriggers", func(w http.ResponseWriter, r *http.Request) { s.setTriggers(w, r, true) })
	r.Admin("POST /_admin/export", s.export)
	r.Fallback(s.isLocatorRequest, http.HandlerFunc(s.serveLocator))
}

func (s *Service) emulators(w http.ResponseWriter, _ *http.Request) {
	out := map[string]Emulator{}
	for _, e := range s.opts.Emulators() {
		out[e.Name] = e
	}
	httpjson.Write(w, http.StatusOK, out)
}

// setTriggers answers the two trigger switches with the state they leave,
// {"enabled": bool}. Without functions firebase-tools answers 400, with a
// JSON error from the disable switch and plain text from the enable one.
func (s *Service) setTriggers(w http.ResponseWriter, r *http.Request, on bool) {
	if s.opts.Triggers == nil {
		const msg = "The Cloud Functions emulator is not running."
		if on {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, msg)
			return
		}
		httpjson.Write(w, http.StatusBadRequest, map[string]string{"error": msg})
		return
	}
	s.opts.Triggers.SetBackgroundTriggers(r.Context(), on)
	httpjson.Write(w, http.StatusOK, map[string]bool{"enabled": s.opts.Triggers.BackgroundTriggersEnabled()})
}

// export answers firebase emulators:export: {"path", "initiatedBy",
// "targets"} in, {"message": "OK"} or {"message": error} out. Pages (any
// request with an Origin) may not start one.
func (s *Service) export(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") != "" {
		httpjson.Write(w, http.StatusForbidden, map[string]string{"message": "Export cannot be triggered by external callers."})
		return
	}
	var req struct {
		Path        string   `json:"path"`
		InitiatedBy string   `json:"initiatedBy"`
		Targets     []string `json:"targets"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil || req.Path == "" {
		httpjson.Write(w, http.StatusBadRequest, map[string]string{"message": `body must be {"path": "<folder>"}`})
		return
	}
	path, err := filepath.Abs(req.Path)
	if err == nil {
		s.opts.Logger.Info("export requested", "path", path, "initiatedBy", req.InitiatedBy)
		err = s.opts.Export(r.Context(), path, req.Targets)
	}
	if err != nil {
		s.opts.Logger.Warn("export failed", "path", path, "err", err)
		httpjson.Write(w, http.StatusInternalServerError, map[string]string{"message": err.Error()})
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "OK"})
}

// hubAddr is the hub's entry of Emulators.
func (s *Service) hubAddr() Emulator {
	for _, e := range s.opts.Emulators() {
		if e.Name == "hub" {
			return e
		}
	}
	return Emulator{}
}

// isLocatorRequest claims GET / when it arrives on the hub's own port.
func (s *Service) isLocatorRequest(r *http.Request) bool {
	if r.Method != http.MethodGet || r.URL.Path != "/" {
		return false
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	port, own := s.opts.OwnPort()
	return ok && own && local.Port == port
}

// locator is what the locator file holds: how to reach the hub.
type locator struct {
	Version string   `json:"version"`
	Origins []string `json:"origins"`
	PID     int      `json:"pid"`
}

func (s *Service) locator() locator {
	hub := s.hubAddr()
	l := locator{Version: Version, PID: os.Getpid()}
	// One origin per address listened on, each one to connect to: loupe
	// listens on one, Host.
	l.Origins = []string{"http://" + net.JoinHostPort(hub.Host, strconv.Itoa(hub.Port))}
	return l
}

// serveLocator answers GET / on the hub port: the locator, with the hub's
// host and port.
func (s *Service) serveLocator(w http.ResponseWriter, _ *http.Request) {
	hub := s.hubAddr()
	l := s.locator()
	httpjson.Write(w, http.StatusOK, map[string]any{"version": l.Version, "origins": l.Origins, "pid": l.PID, "host": hub.Host, "port": hub.Port})
}

// locatorPath is where firebase-tools looks for the hub of project: a file
// in the temporary folder, tmp.
func locatorPath(tmp, project string) string {
	if tmp == "" {
		tmp = os.TempDir()
	}
	if project == "" {
		project = "demo-no-project"
	}
	return filepath.Join(tmp, "hub-"+project+".json")
}

// Open implements server.Opener: it writes the locator file, so that
// firebase emulators:export finds this hub, unless a live process holds it.
func (s *Service) Open(context.Context) error {
	if _, own := s.opts.OwnPort(); !own {
		return nil
	}
	path := locatorPath(s.opts.TempDir, s.opts.Project)
	if data, err := os.ReadFile(path); err == nil {
		var prev struct{ PID int }
		if json.Unmarshal(data, &prev) == nil && prev.PID != 0 && alive(prev.PID) {
			s.opts.Logger.Warn("another emulator hub runs for this project; firebase emulators:export will find that one",
				"project", s.opts.Project, "pid", prev.PID, "locator", path)
			return nil
		}
	}
	data, _ := json.Marshal(s.locator())
	if err := os.WriteFile(path, data, 0o644); err != nil {
		s.opts.Logger.Warn("hub locator not written", "path", path, "err", err)
		return nil
	}
	s.locatorFile = path
	return nil
}

// Close implements server.Closer: it removes the locator file it wrote.
func (s *Service) Close() error {
	if s.locatorFile == "" {
		return nil
	}
	var cur struct{ PID int }
	if data, err := os.ReadFile(s.locatorFile); err == nil && json.Unmarshal(data, &cur) == nil && cur.PID == os.Getpid() {
		if err := os.Remove(s.locatorFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("hub locator: %w", err)
		}
	}
	return nil
}
