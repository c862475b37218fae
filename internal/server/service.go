package server

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
)

// Service is one emulated service (firestore, auth, storage, …).
type Service interface {
	// Name is the service's short name, as in firebase.json's emulators block.
	Name() string
	// Register adds the service's HTTP routes and gRPC services.
	Register(r *Routes)
}

// Opener is a service that loads state before it serves: from its data dir,
// or from Env.ImportDir when an import was asked for.
type Opener interface {
	Open(ctx context.Context) error
}

// Closer is a service with state to flush and release at shutdown.
type Closer interface {
	Close() error
}

// Exporter writes the service's state into dir, the root of an export in the
// firebase-tools layout (each service writes its own <name>_export folder).
type Exporter interface {
	Export(ctx context.Context, dir string) error
}

// Importer replaces the service's state with the export rooted at dir, while
// serving (loupe data import). Services that load imports only at open
// implement Opener alone.
type Importer interface {
	Import(ctx context.Context, dir string) error
}

type progressKey struct{}

// WithImportProgress returns ctx carrying progress, which an Importer that
// counts documents (Firestore) tells how many of the export's documents it
// has read: once with done 0 as soon as it knows total, then as it goes.
func WithImportProgress(ctx context.Context, progress func(done, total int)) context.Context {
	return context.WithValue(ctx, progressKey{}, progress)
}

// ImportProgress is the progress ctx carries, nil when none.
func ImportProgress(ctx context.Context) func(done, total int) {
	p, _ := ctx.Value(progressKey{}).(func(done, total int))
	return p
}

// FormatLoupe is the export format every Exporter writes and every Importer
// reads: firebase-tools' folder names with loupe's files.
const FormatLoupe = "loupe"

// Formats converts exports between loupe's layout and others.
type Formats interface {
	// Import returns a folder in loupe's layout holding the export at dir
	// (dir itself when it is in loupe's layout; a conversion's files may
	// link into dir, which must stay until the services have imported),
	// and a func that removes what the conversion wrote. It fails, before
	// any service changes, when dir is damaged or in no layout it knows.
	Import(dir string) (loupeDir string, done func(), err error)
	// Export writes the export at loupeDir (loupe's layout) into dst in
	// format. It may move files out of loupeDir, which the caller removes
	// afterwards.
	Export(loupeDir, dst, format string) error
}

// ProgressFormats are Formats whose import check tells progress how many of
// the export's documents it has read.
type ProgressFormats interface {
	Formats
	ImportWithProgress(dir string, progress func(done, total int)) (loupeDir string, done func(), err error)
}

// Mux is net/http's mux, remembering each pattern registered on it so the
// server can list its routes (Server.Routes).
type Mux struct {
	*http.ServeMux
	patterns []string
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{ServeMux: http.NewServeMux()} }

// Handle registers h for pattern.
func (m *Mux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// HandleFunc registers h for pattern.
func (m *Mux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, h)
}

// Routes is where services register. HTTP patterns use net/http's syntax
// ("POST /v1/{path...}"); two services must not register the same pattern.
type Routes struct {
	HTTP *Mux
	GRPC *grpc.Server
	// Credentials is the credential policy: in strict mode Admin routes
	// answer only the admin credential.
	Credentials identity.Credentials

	fallbacks fallbackChain
	// grpcFallbacks answer the calls of gRPC services no service
	// registered, by service name (GRPCFallback).
	grpcFallbacks map[string]grpc.StreamHandler
	// admin are the patterns registered with Admin.
	admin []string
	hosts HostPolicy
}

// Route is one HTTP pattern a service registered, and whether it is an
// admin endpoint (Routes.Admin).
type Route struct {
	Pattern string
	Admin   bool
}

// List is every HTTP pattern registered so far, in registration order.
func (r *Routes) List() []Route {
	out := make([]Route, 0, len(r.HTTP.patterns))
	for _, p := range r.HTTP.patterns {
		out = append(out, Route{Pattern: p, Admin: slices.Contains(r.admin, p)})
	}
	return out
}

// Admin registers an emulator admin endpoint: one that resets, loads or
// exports state or replaces rules, which the official emulators let anyone
// who reaches the port call. In strict mode its requests must name this
// machine (or an allowed name) in Host, so that a page that rebinds its own
// name to 127.0.0.1 cannot call it, and carry the admin credential
// (identity.Credentials.AdminToken); it answers 403 without either.
func (r *Routes) Admin(pattern string, h http.HandlerFunc) {
	r.admin = append(r.admin, pattern)
	creds, hosts := r.Credentials, r.hosts
	r.HTTP.HandleFunc(pattern, func(w http.ResponseWriter, req *http.Request) {
		if !hosts.Allowed(req.Host) {
			refuseHost(w, req)
			return
		}
		if creds.IsStrict() {
			if who, err := creds.Authenticate(req.Header.Get("Authorization"), ""); err != nil || !who.Owner {
				refuseAdmin(w, req)
				return
			}
		}
		h(w, req)
	})
}

// refuseAdmin is what an admin endpoint answers in strict mode without the
// admin credential.
func refuseAdmin(w http.ResponseWriter, _ *http.Request) {
	httpjson.Error(w, errs.New(errs.PermissionDenied,
		"loupe runs with --strict-credentials: the emulator admin endpoints need the admin credential (the admin token in the data dir)"))
}

// Fallback claims requests that no HTTP pattern matched, for handlers that
// cannot be told apart by pattern (GCS object reads at /{bucket}/{object},
// the hosted web app). Fallbacks are tried in registration order; the first
// whose match returns true serves the request. Unclaimed requests get 404.
func (r *Routes) Fallback(match func(*http.Request) bool, h http.Handler) {
	r.fallbacks = append(r.fallbacks, fallback{match, h})
}

type fallback struct {
	match   func(*http.Request) bool
	handler http.Handler
}

type fallbackChain []fallback

// GRPCFallback answers every call of the gRPC service named service
// ("google.firestore.v1.Firestore") that no service registered with GRPC,
// as a raw stream: h receives and sends Encoded messages (a proxy).
func (r *Routes) GRPCFallback(service string, h grpc.StreamHandler) {
	if r.grpcFallbacks == nil {
		r.grpcFallbacks = map[string]grpc.StreamHandler{}
	}
	r.grpcFallbacks[service] = h
}

// unknownService runs the GRPCFallback of an unregistered service's call,
// or answers Unimplemented as gRPC does.
func (r *Routes) unknownService(srv any, ss grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(ss)
	service, _, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	if h, ok := r.grpcFallbacks[service]; ok {
		return h(srv, ss)
	}
	return status.Errorf(codes.Unimplemented, "unknown service %v", service)
}

// Unmatched is the handler that runs the fallbacks; the server mounts it at "/".
func (r *Routes) Unmatched() http.Handler { return r.fallbacks }

func (c fallbackChain) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for _, f := range c {
		if f.match(r) {
			f.handler.ServeHTTP(w, r)
			return
		}
	}
	http.NotFound(w, r)
}

// Env is what every service is built from.
type Env struct {
	// ProjectID is the default project (other projects are served too).
	ProjectID string
	// DataDir is the service's own folder under --data-dir, or "" when in memory.
	DataDir string
	// ImportDir is the root of an export to load at open, or "".
	ImportDir string
	// Config is the parsed firebase.json.
	Config *config.Firebase
	// Logger is the service's logger.
	Logger *slog.Logger
	// Credentials is the credential policy: local mode, or strict mode
	// (--strict-credentials).
	Credentials identity.Credentials
}
