// Package console serves the loupe console, the web app at /_/console that
// shows and changes what the emulator holds, and the admin endpoints under
// /emulator/v1 that it needs beside the Firebase APIs (which it calls as the
// owner). `npm run build` in web/ builds the console into dist/app, which is
// embedded in the binary and committed, so that `go install` needs no Node
// (make test fails when the committed build is not what web/ builds).
package console

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/logring"
	"github.com/loupe-dev/loupe/internal/server"
)

//go:embed all:dist
var dist embed.FS

// Prefix is where the console is served.
const Prefix = "/_/console"

// Options configure the console.
type Options struct {
	// Strict turns the console off (loupe serve --strict-credentials).
	Strict bool
	// Started is when loupe started, for the uptime.
	Started time.Time
	// ProjectID is the default project.
	ProjectID string
	// URL is the main port's base URL, known once the server listens.
	URL func() string
	// UIPort is the console's own port once bound (emulators.ui.port, or
	// the free one taken for firebase-tools' default), 0 for none; its root
	// redirects to the console. nil: no own port.
	UIPort func() int
	// Port is the port where a service answers first (its own, or the main port).
	Port func(service string) int
	// Env are the variables a server SDK or test needs to reach loupe;
	// Exports are the same as `loupe serve --print-env` prints them.
	Env     func() []EnvVar
	Exports func() string
	// State is a service's state now (nil: every service runs).
	State func(service string) State
	// Services name the services loupe serves.
	Services []string
	// DataDir is the --data-dir, "" when in memory.
	DataDir string
	// Firestore is the Firestore engine, nil when Firestore is off.
	Firestore *firestore.Engine
	// Export writes a full export into a folder; Import loads one.
	Export, Import func(ctx context.Context, dir string) error
	// Logger logs what the console's endpoints do.
	Logger *slog.Logger
	// Logs are every service's recent log records (nil: no Logs endpoint).
	Logs *logring.Ring
}

// Service is the console service of loupe serve.
type Service struct {
	opts  Options
	files fs.FS
	done  chan struct{}
}

// New builds the console.
func New(opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	files, _ := fs.Sub(dist, "dist/app")
	return &Service{opts: opts, files: files, done: make(chan struct{})}
}

// Name implements server.Service.
func (s *Service) Name() string { return "console" }

// Close implements server.Closer: live streams end.
func (s *Service) Close() error {
	close(s.done)
	if s.opts.Logs != nil {
		s.opts.Logs.Close()
	}
	return nil
}

// Register implements server.Service.
func (s *Service) Register(r *server.Routes) {
	r.HTTP.HandleFunc("GET "+Prefix, s.serveApp)
	r.HTTP.HandleFunc("GET "+Prefix+"/{path...}", s.serveApp)
	if s.opts.UIPort != nil && !s.opts.Strict {
		r.Fallback(s.isUIRoot, http.RedirectHandler(Prefix+"/", http.StatusFound))
	}
	r.Admin("GET /emulator/v1/overview", s.overview)
	if s.opts.Logs != nil {
		r.Admin("GET /emulator/v1/logs", s.opts.Logs.ServeHTTP)
	}
	r.Admin("GET /emulator/v1/export/archive", s.exportArchive)
	r.Admin("POST /emulator/v1/import/archive", s.importArchive)
	if s.opts.Firestore != nil {
		r.Admin("GET /emulator/v1/firestore/databases", s.databases)
		r.Admin("GET /emulator/v1/firestore/changes", s.changes)
		r.Admin("DELETE /emulator/v1/projects/{project}/databases/{database}/documents/{path...}", s.deleteTree)
	}
}

// isUIRoot reports whether r asks for / on the UI port.
func (s *Service) isUIRoot(r *http.Request) bool {
	if r.URL.Path != "/" {
		return false
	}
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	_, port, _ := net.SplitHostPort(addr.String())
	ui := s.opts.UIPort()
	return ui != 0 && port == strconv.Itoa(ui)
}

// serveApp serves the console's files; every other path under the prefix is
// the single-page app's console.html.
func (s *Service) serveApp(w http.ResponseWriter, r *http.Request) {
	if s.opts.Strict {
		http.Error(w, "the loupe console is off: loupe runs with --strict-credentials", http.StatusNotFound)
		return
	}
	name := strings.TrimPrefix(r.PathValue("path"), "/")
	if name != "" && name != "console.html" {
		if f, err := fs.Stat(s.files, name); err == nil && !f.IsDir() {
			if strings.HasPrefix(name, "assets/") {
				w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
			}
			http.ServeFileFS(w, r, s.files, name)
			return
		}
		if path.Ext(name) != "" && !strings.Contains(name, ":") {
			http.NotFound(w, r)
			return
		}
	}
	page, err := fs.ReadFile(s.files, "console.html")
	if err != nil {
		http.Error(w, "the console is not built into this loupe: run `npm run build` in web/, then `go build ./cmd/loupe`", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(page)
}
