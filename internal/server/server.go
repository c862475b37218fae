package server

import (
	"cmp"
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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/identity"
)

// maxGRPCMessage is the largest gRPC message accepted or sent; Firestore's
// limits (1 MiB documents, 500 writes) fit well inside it.
const maxGRPCMessage = 64 << 20

// shutdownGrace is how long in-flight requests get before connections are cut.
const shutdownGrace = 3 * time.Second

// Options configure a Server.
type Options struct {
	Host string
	// Port is the main port; 0 picks a free one.
	Port int
	// PortSearch is how many ports after a taken Port to try, in order,
	// before failing (0: Port or nothing). Taking another is a warning.
	PortSearch int
	// ExtraPorts are the official emulators' ports from firebase.json and the
	// Emulator Hub's: each serves the same handler as the main port, so
	// connect*Emulator calls made for the official suite's ports work
	// unchanged. A taken extra port is a warning (the service still answers
	// on the main port) unless StrictPorts.
	ExtraPorts  []ServicePort
	StrictPorts bool
	// ExportOnExit, when set, is the folder an export is written to at
	// shutdown, in ExportFormat (FormatLoupe when empty).
	ExportOnExit string
	// ForceExport lets ExportOnExit write into a folder that holds other
	// files and no export.
	ForceExport  bool
	ExportFormat string
	ProjectID    string
	Logger       *slog.Logger
	// Credentials is the credential policy; in strict mode the admin
	// endpoints services register with Routes.Admin (reset, export, import,
	// rules, debug), which anyone reaching the port could otherwise call,
	// need the admin credential.
	Credentials identity.Credentials
	// AllowOrigins are the pages (besides this machine's) that may call
	// loupe, normalised by NormalizeOrigin (--allow-origin, firebase.json
	// emulators.cors).
	AllowOrigins []string
	// AdminPort, in strict mode, is a port of 127.0.0.1 where the owner
	// credential the Admin SDKs send to an emulator counts as the admin
	// credential (0 picks a free one); it is not bound in local mode.
	AdminPort int
	// Formats reads and writes exports in layouts other than loupe's; nil
	// reads and writes loupe's layout only.
	Formats Formats
	// IdleTimeout closes a connection whose request body sends nothing, or
	// that waits for its next request, for this long (0: DefaultIdleTimeout).
	IdleTimeout time.Duration
	// DataRoots are the folders an export or import path given over HTTP
	// must lie in (the project folder, the data dir, the temp folder); none
	// confines nothing.
	DataRoots []string
}

// Server serves a set of services on one or more ports.
type Server struct {
	opts      Options
	services  []Service
	mux       *Mux
	grpc      *grpc.Server
	http      *http.Server
	listeners []net.Listener
	// ports is where each service of ExtraPorts answers: its own port when
	// it was bound, the main port otherwise.
	ports map[string]int
	ready atomic.Bool
	// readyc is closed once every service is open and requests are served.
	readyc chan struct{}
	hosts  HostPolicy
	routes *Routes
	// admin is the strict mode's admin listener, or nil.
	admin net.Listener
}

// ServicePort is an extra port and the service it is for ("firestore",
// "hub", …). Port 0 picks a free one.
type ServicePort struct {
	Service string
	Port    int
	// Default says firebase.json and the flags name no port for the
	// service and Port is firebase-tools' default: when it is taken the
	// next free one is taken instead, as firebase-tools picks its hub's
	// and UI's, even with StrictPorts.
	Default bool
}

// defaultPortSearch is how many ports after a taken default port Listen
// tries.
const defaultPortSearch = 50

// New builds a server and registers every service's routes.
func New(opts Options, services []Service) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	s := &Server{
		opts:     opts,
		services: services,
		mux:      NewMux(),
		readyc:   make(chan struct{}),
	}
	routes := &Routes{Credentials: opts.Credentials}
	s.grpc = grpc.NewServer(grpc.MaxRecvMsgSize(maxGRPCMessage), grpc.MaxSendMsgSize(maxGRPCMessage), Codec(),
		grpc.UnknownServiceHandler(func(srv any, ss grpc.ServerStream) error { return routes.unknownService(srv, ss) }),
		grpc.ConnectionTimeout(prefaceTimeout), grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: opts.IdleTimeout}),
		grpc.ChainUnaryInterceptor(recoverUnary(opts.Logger), s.guardUnary), grpc.ChainStreamInterceptor(recoverStream(opts.Logger), s.guardStream))
	s.hosts = NewHostPolicy(opts.Host, opts.AllowOrigins, !opts.Credentials.IsStrict(), opts.Logger)
	routes.HTTP, routes.GRPC, routes.hosts = s.mux, s.grpc, s.hosts
	s.routes = routes
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	routes.Admin("POST /emulator/v1/export", s.handleExport)
	routes.Admin("POST /emulator/v1/import", s.handleImport)
	routes.Admin("GET /emulator/v1/debug/vars", handleDebugVars)
	for _, svc := range services {
		svc.Register(routes)
	}
	s.mux.Handle("/", routes.Unmatched())
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	s.http = &http.Server{
		Handler:           s.handler(),
		Protocols:         &protocols,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       opts.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelDebug),
		ConnContext:       s.markAdminConn,
	}
	return s
}

// Routes lists every HTTP pattern the services and the server registered
// (requests no pattern matches go to the fallbacks: GCS object paths, the
// hosted app); gRPC services are not listed.
func (s *Server) Routes() []Route { return s.routes.List() }

// Handler is the server's root handler, for tests that serve it themselves.
func (s *Server) Handler() http.Handler { return s.http.Handler }

// Open opens the services and marks the server ready without binding a
// port, for tests that serve Handler themselves; Close closes them.
func (s *Server) Open(ctx context.Context) error {
	if err := s.open(ctx); err != nil {
		_ = s.closeServices()
		return err
	}
	s.ready.Store(true)
	return nil
}

// Close closes the services of a server opened with Open.
func (s *Server) Close() error {
	s.ready.Store(false)
	return s.closeServices()
}

func (s *Server) handler() http.Handler {
	web := withRecover(withIdleBodies(withCORS(s.mux, s.hosts), s.opts.IdleTimeout), s.opts.Logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(adminConnKey{}) != nil {
			promoteOwner(r, s.opts.Credentials)
		}
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			s.grpc.ServeHTTP(w, r) // guardUnary and guardStream check it
			return
		}
		if !s.ready.Load() && r.URL.Path != "/healthz" {
			http.Error(w, "loupe is starting", http.StatusServiceUnavailable)
			return
		}
		web.ServeHTTP(w, r)
	})
}

// guardCall does for a gRPC call what the HTTP handler does for a request,
// on either transport (the gRPC server's own, or net/http's in tests that
// serve Handler): the owner credential sent to the admin port becomes the
// admin credential.
func (s *Server) guardCall(ctx context.Context) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	p, _ := peer.FromContext(ctx)
	auth := md.Get("authorization")
	if s.admin != nil && p != nil && p.LocalAddr != nil && p.LocalAddr.String() == s.admin.Addr().String() && len(auth) > 0 {
		if scheme, token, ok := strings.Cut(auth[0], " "); ok && strings.TrimSpace(token) == "owner" {
			md = md.Copy()
			md.Set("authorization", scheme+" "+s.opts.Credentials.AdminToken())
			return metadata.NewIncomingContext(ctx, md), nil
		}
	}
	return ctx, nil
}

func (s *Server) guardUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx, err := s.guardCall(ctx)
	if err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func (s *Server) guardStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx, err := s.guardCall(ss.Context())
	if err != nil {
		return err
	}
	return handler(srv, guardedStream{ss, ctx})
}

// guardedStream is a stream with the context guardCall returned.
type guardedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (g guardedStream) Context() context.Context { return g.ctx }

// adminConnKey marks the context of a connection to the admin port.
type adminConnKey struct{}

func (s *Server) markAdminConn(ctx context.Context, c net.Conn) context.Context {
	if s.admin != nil && c.LocalAddr().String() == s.admin.Addr().String() {
		return context.WithValue(ctx, adminConnKey{}, true)
	}
	return ctx
}

// promoteOwner turns the owner credential the Admin SDKs send to an
// emulator ("Bearer owner") into the admin credential, for a request to the
// admin port.
func promoteOwner(r *http.Request, creds identity.Credentials) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if ok && strings.TrimSpace(token) == "owner" {
		r.Header.Set("Authorization", scheme+" "+creds.AdminToken())
	}
}

// AdminURL is the base URL of the strict mode's admin port, "" without one.
// Valid after Listen.
func (s *Server) AdminURL() string {
	if s.admin == nil {
		return ""
	}
	return "http://" + s.admin.Addr().String()
}

// Listen binds the main port and the extra ports. A taken main port is an
// error naming it; a taken extra port firebase.json names is logged as a
// warning naming the port and its service, or is an error with
// StrictPorts; a taken default port is replaced by the next free one.
func (s *Server) Listen() error {
	main, err := listen(s.opts.Host, s.opts.Port)
	for next := s.opts.Port + 1; err != nil && errors.Is(err, errPortInUse) && next <= s.opts.Port+s.opts.PortSearch; next++ {
		if main, err = listen(s.opts.Host, next); err == nil {
			s.opts.Logger.Warn(fmt.Sprintf("port %d is already in use; serving on %d instead (--port chooses the port)", s.opts.Port, next))
		}
	}
	if err != nil {
		return err
	}
	s.listeners = append(s.listeners, main)
	mainPort := main.Addr().(*net.TCPAddr).Port
	s.ports = map[string]int{}
	bound := map[int]bool{mainPort: true}
	named := map[int]bool{}
	for _, sp := range s.opts.ExtraPorts {
		if !sp.Default {
			named[sp.Port] = true
		}
	}
	// The ports firebase.json names first, so that a default port's search
	// never takes one of them.
	for _, pass := range []bool{false, true} {
		for _, sp := range s.opts.ExtraPorts {
			if sp.Default != pass {
				continue
			}
			if err := s.listenExtra(sp, bound, named, mainPort); err != nil {
				s.closeListeners()
				return err
			}
		}
	}
	if s.opts.Credentials.IsStrict() {
		l, err := listen("127.0.0.1", s.opts.AdminPort)
		if err != nil {
			s.closeListeners()
			return fmt.Errorf("admin port: %w", err)
		}
		s.admin = l
		s.listeners = append(s.listeners, l)
	}
	return nil
}

// listenExtra binds sp's port, or for a default port that is taken the
// next free one; when none can be bound the service answers on the main
// port, with a warning, unless StrictPorts and firebase.json named the port.
func (s *Server) listenExtra(sp ServicePort, bound, named map[int]bool, mainPort int) error {
	if sp.Port != 0 && bound[sp.Port] {
		s.ports[sp.Service] = sp.Port
		return nil
	}
	l, err := listen(s.opts.Host, sp.Port)
	for next := sp.Port + 1; err != nil && sp.Default && next <= min(sp.Port+defaultPortSearch, 65535); next++ {
		if bound[next] || named[next] {
			continue
		}
		if l, err = listen(s.opts.Host, next); err == nil {
			s.opts.Logger.Warn(fmt.Sprintf("port %d for %s is taken; %s listens on %d instead (firebase.json names no port for it)", sp.Port, sp.Service, sp.Service, next),
				"service", sp.Service, "port", next)
		}
	}
	if err != nil && s.opts.StrictPorts && !sp.Default {
		return fmt.Errorf("%s: %w (without --strict-ports it would answer on the main port %d)", sp.Service, err, mainPort)
	}
	if err != nil {
		s.opts.Logger.Warn(fmt.Sprintf("port %d for %s is not available; %s answers on the main port %d only", sp.Port, sp.Service, sp.Service, mainPort),
			"service", sp.Service, "port", sp.Port, "err", err)
		s.ports[sp.Service] = mainPort
		return nil
	}
	port := l.Addr().(*net.TCPAddr).Port
	bound[port] = true
	s.ports[sp.Service] = port
	s.listeners = append(s.listeners, l)
	return nil
}

// OwnPort is service's extra port, and whether it was bound. Valid after
// Listen.
func (s *Server) OwnPort(service string) (int, bool) {
	p, ok := s.ports[service]
	return p, ok && p != s.mainPort()
}

// Port is the port where service answers first: its own extra port when it
// has one and it was bound, the main port otherwise. Valid after Listen;
// 0 for a server serving its Handler without a port (Open).
func (s *Server) Port(service string) int {
	if p, ok := s.ports[service]; ok {
		return p
	}
	return s.mainPort()
}

func (s *Server) mainPort() int {
	if len(s.listeners) == 0 {
		return 0
	}
	return s.listeners[0].Addr().(*net.TCPAddr).Port
}

// errPortInUse is listen's error for a port another process holds.
var errPortInUse = errors.New("is already in use")

func listen(host string, port int) (net.Listener, error) {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("port %d %w on %s", port, errPortInUse, host)
		}
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return l, nil
}

func (s *Server) closeListeners() {
	for _, l := range s.listeners {
		_ = l.Close()
	}
	s.listeners = nil
}

// Ready is closed once Run has opened every service and serves requests.
func (s *Server) Ready() <-chan struct{} { return s.readyc }

// URL is the base URL of the main port; valid after Listen ("" for a
// server serving its Handler without a port).
func (s *Server) URL() string {
	if len(s.listeners) == 0 {
		return ""
	}
	return "http://" + s.listeners[0].Addr().String()
}

// Run serves until ctx is done, then shuts down: in-flight requests get a grace
// period, services are closed, and an export is written if one was asked for.
func (s *Server) Run(ctx context.Context) error {
	errc := make(chan error, len(s.listeners))
	for _, l := range s.listeners {
		hl, gl := demux(shed(l))
		go func() { errc <- s.http.Serve(hl) }()
		go func() { _ = s.grpc.Serve(gl) }()
	}
	if err := s.open(ctx); err != nil {
		_ = s.http.Close()
		s.closeServices()
		return err
	}
	s.ready.Store(true)
	close(s.readyc)
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	s.ready.Store(false)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := s.http.Shutdown(shutdownCtx); err != nil {
		_ = s.http.Close()
	}
	s.grpc.Stop()
	var exportErr error
	if s.opts.ExportOnExit != "" {
		exportErr = s.ExportServices(context.Background(), s.opts.ExportOnExit, cmp.Or(s.opts.ExportFormat, FormatLoupe), nil, s.opts.ForceExport)
	}
	closeErr := s.closeServices()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return errors.Join(exportErr, closeErr)
}

func (s *Server) open(ctx context.Context) error {
	for _, svc := range s.services {
		if o, ok := svc.(Opener); ok {
			if err := o.Open(ctx); err != nil {
				return fmt.Errorf("open %s: %w", svc.Name(), err)
			}
		}
	}
	return nil
}

func (s *Server) closeServices() error {
	var errs []error
	for _, svc := range s.services {
		if c, ok := svc.(Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close %s: %w", svc.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// Export writes every service's state into dir in loupe's layout.
func (s *Server) Export(ctx context.Context, dir string) error {
	return s.ExportAs(ctx, dir, FormatLoupe)
}

// ExportAs writes every service's state into dir in format (FormatLoupe
// or exports.FormatFirebase). See ExportServices.
func (s *Server) ExportAs(ctx context.Context, dir, format string) error {
	return s.ExportServices(ctx, dir, format, nil, false)
}

// ErrNotAnExport is returned for an export into a folder that holds other
// files and no export, without force.
var ErrNotAnExport = errors.New("the folder is not empty and holds no export (firebase-export-metadata.json): choose an empty or new folder, or an earlier export")

// ExportServices is ExportAs of the services named in only (all when nil).
// It writes the export beside dir first, then swaps in its own entries one
// by one (firebase-export-metadata.json last, each by rename), removes the
// export entries of an earlier export it did not write again, and never
// touches anything else in dir. A dir that holds other files and no export
// is refused with ErrNotAnExport unless force.
func (s *Server) ExportServices(ctx context.Context, dir, format string, only []string, force bool) error {
	if format != FormatLoupe && s.opts.Formats == nil {
		return fmt.Errorf("export: unknown format %q (known: %s)", format, FormatLoupe)
	}
	dir = filepath.Clean(dir)
	if err := checkExportDir(dir, force); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".export-")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if format == FormatLoupe {
		if err := s.exportLoupe(ctx, tmp, only); err != nil {
			return err
		}
		return swapEntries(tmp, dir)
	}
	// Inside dir, so that Formats.Export can move files out of it.
	own, err := os.MkdirTemp(dir, ".export-loupe-")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer os.RemoveAll(own)
	if err := s.exportLoupe(ctx, own, only); err != nil {
		return err
	}
	if err := s.opts.Formats.Export(own, tmp, format); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return swapEntries(tmp, dir)
}

// exportLoupe writes the state of the services named in only (all when nil)
// into dir in loupe's layout.
func (s *Server) exportLoupe(ctx context.Context, dir string, only []string) error {
	meta := map[string]any{"version": FormatLoupe}
	for _, svc := range s.services {
		e, ok := svc.(Exporter)
		if !ok || (only != nil && !slices.Contains(only, svc.Name())) {
			continue
		}
		if err := e.Export(ctx, dir); err != nil {
			return fmt.Errorf("export %s: %w", svc.Name(), err)
		}
		meta[svc.Name()] = map[string]string{"version": FormatLoupe, "path": svc.Name() + "_export"}
	}
	data, _ := json.MarshalIndent(meta, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, metadataFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// metadataFile marks a folder as an export.
const metadataFile = "firebase-export-metadata.json"

// isExportEntry reports whether name is one an export writes: the metadata
// file or a service's <name>_export folder (firestore_export, auth_export,
// storage_export, database_export, stripe_export, …).
func isExportEntry(name string) bool {
	return name == metadataFile || (strings.HasSuffix(name, "_export") && !strings.HasPrefix(name, "."))
}

// checkExportDir refuses, unless force, a dir that holds entries but no
// export; a missing or empty dir, or an earlier export, is fine.
func checkExportDir(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if force || len(entries) == 0 {
		return nil
	}
	for _, e := range entries {
		if e.Name() == metadataFile {
			return nil
		}
	}
	return ErrNotAnExport
}

// swapEntries moves the export entries of fresh into dir: each replaced
// entry is renamed aside first and removed once the new one stands, the
// metadata file last; export entries of dir that fresh lacks are removed.
func swapEntries(fresh, dir string) error {
	entries, err := os.ReadDir(fresh)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name()] = true
	}
	old, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	aside, err := os.MkdirTemp(dir, ".export-old-")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer os.RemoveAll(aside)
	for _, e := range old {
		if isExportEntry(e.Name()) && !names[e.Name()] {
			if err := os.Rename(filepath.Join(dir, e.Name()), filepath.Join(aside, e.Name())); err != nil {
				return fmt.Errorf("export: remove the earlier export's %s: %w", e.Name(), err)
			}
		}
	}
	ordered := make([]string, 0, len(names))
	for _, e := range entries {
		if e.Name() != metadataFile {
			ordered = append(ordered, e.Name())
		}
	}
	if names[metadataFile] {
		ordered = append(ordered, metadataFile)
	}
	for _, name := range ordered {
		dst := filepath.Join(dir, name)
		if err := os.Rename(dst, filepath.Join(aside, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("export: move the earlier %s aside: %w", name, err)
		}
		if err := os.Rename(filepath.Join(fresh, name), dst); err != nil {
			_ = os.Rename(filepath.Join(aside, name), dst)
			return fmt.Errorf("export: %w", err)
		}
	}
	return nil
}

// Import replaces every importing service's state with the export at dir.
func (s *Server) Import(ctx context.Context, dir string) error {
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("import: %s is not a folder", dir)
	}
	if s.opts.Formats != nil {
		prepare := s.opts.Formats.Import
		if progress, ok := s.opts.Formats.(ProgressFormats); ok && ImportProgress(ctx) != nil {
			var check func(done, total int)
			check, ctx = splitImportProgress(ctx)
			prepare = func(dir string) (string, func(), error) { return progress.ImportWithProgress(dir, check) }
		}
		own, done, err := prepare(dir)
		if err != nil {
			return err
		}
		defer done()
		dir = own
	}
	for _, svc := range s.services {
		if im, ok := svc.(Importer); ok {
			if err := im.Import(ctx, dir); err != nil {
				return fmt.Errorf("import %s: %w", svc.Name(), err)
			}
		}
	}
	return nil
}

// splitImportProgress makes ctx's import progress count each document
// twice, as an import reads it twice: once when the export is checked (the
// returned check), once when a service loads it (the returned context's).
// Without a check, the load counts whole.
func splitImportProgress(ctx context.Context) (check func(done, total int), _ context.Context) {
	progress := ImportProgress(ctx)
	checked := false
	check = func(done, total int) {
		checked = true
		progress(done/2, total)
	}
	load := func(done, total int) {
		if !checked {
			progress(done, total)
			return
		}
		progress((total+done)/2, total)
	}
	return check, WithImportProgress(ctx, load)
}

// dataRequest is the body of the export and import endpoints; Format is
// the export's (FormatLoupe when empty); Force, honoured only from a
// program (a request without Origin: loupe data export --force), lets an
// export write into a folder that holds other files.
type dataRequest struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	Force  bool   `json:"force"`
}

func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	s.handleData(w, r, func(ctx context.Context, dir string, req dataRequest) error {
		return s.ExportServices(ctx, dir, req.Format, nil, req.Force && r.Header.Get("Origin") == "")
	})
}

func (s *Server) handleImport(w http.ResponseWriter, r *http.Request) {
	s.handleData(w, r, func(ctx context.Context, dir string, _ dataRequest) error { return s.Import(ctx, dir) })
}

// handleData runs an export or import on a folder of this machine: these
// endpoints are for the local CLI (loupe data export|import). A path outside
// DataRoots or a refused folder is a 400, a failure a 500.
func (s *Server) handleData(w http.ResponseWriter, r *http.Request, op func(ctx context.Context, dir string, req dataRequest) error) {
	var req dataRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil || req.Path == "" {
		httpjson.Error(w, errs.New(errs.InvalidArgument, `body must be {"path": "<folder>"}`))
		return
	}
	if req.Format == "" {
		req.Format = FormatLoupe
	}
	path, err := s.ConfinedPath(req.Path)
	if err == nil {
		err = op(r.Context(), path, req)
	}
	if errors.Is(err, ErrNotAnExport) || errors.Is(err, ErrOutsideRoots) {
		httpjson.Error(w, errs.New(errs.InvalidArgument, err.Error()))
		return
	}
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"path": path})
}

// ErrOutsideRoots is returned for an export or import path given over HTTP
// that lies outside DataRoots.
var ErrOutsideRoots = errors.New("paths given over HTTP must lie in the project folder, the data dir or the temp folder (loupe data export and import copy other folders themselves)")

// ConfinedPath returns path made absolute, or ErrOutsideRoots when it
// (its symbolic links resolved) lies outside every one of DataRoots.
func (s *Server) ConfinedPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil || len(s.opts.DataRoots) == 0 {
		return abs, err
	}
	real := resolveExisting(abs)
	for _, root := range s.opts.DataRoots {
		if rel, err := filepath.Rel(resolveExisting(root), real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return abs, nil
		}
	}
	return "", ErrOutsideRoots
}

// resolveExisting resolves the symbolic links of path's longest existing
// prefix and appends the rest.
func resolveExisting(path string) string {
	rest := ""
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(p) == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// MoveExport moves the export at fresh (written by Export into a folder of
// its own, on any filesystem) into dir with Export's rules: only its own
// entries change, and a folder that holds other files and no export is
// refused unless force. loupe data export uses it for a folder outside
// DataRoots.
func MoveExport(fresh, dir string, force bool) error {
	if err := checkExportDir(dir, force); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	staged, err := os.MkdirTemp(dir, ".export-")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer os.RemoveAll(staged)
	if err := CopyTree(fresh, staged); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return swapEntries(staged, dir)
}

// CopyTree copies the folders and regular files under src into dst.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		default:
			return fmt.Errorf("%s is not a file or folder", rel)
		}
	})
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	services := map[string]string{}
	state := "starting"
	if s.ready.Load() {
		state = "ready"
	}
	for _, svc := range s.services {
		services[svc.Name()] = state
	}
	code := http.StatusOK
	if !s.ready.Load() {
		code = http.StatusServiceUnavailable
	}
	credentials := "local"
	if s.opts.Credentials.IsStrict() {
		credentials = "strict"
	}
	httpjson.Write(w, code, map[string]any{
		"status":   state,
		"project":  s.opts.ProjectID,
		"services": services,
		// credentials tells a client (loupe data pull) whether this loupe
		// runs with --strict-credentials, so it can refuse to change data
		// others may rely on.
		"credentials": credentials,
	})
}

// handleDebugVars reports the process's goroutines and memory, so load tests
// can check that clients leave nothing behind.
func handleDebugVars(w http.ResponseWriter, _ *http.Request) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	httpjson.Write(w, http.StatusOK, map[string]any{
		"goroutines":     runtime.NumGoroutine(),
		"heapInuseBytes": m.HeapInuse,
		"sysBytes":       m.Sys,
		"rssBytes":       residentBytes(),
	})
}

// residentBytes is the process's resident set size, 0 where /proc is absent.
func residentBytes() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(fields[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
