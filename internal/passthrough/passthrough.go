// Package passthrough forwards the requests of a service loupe does not
// emulate (loupe serve --pass-through storage,auth,database) to its
// production endpoint, or to an upstream given as host:port, streaming both
// ways, so an app and its functions use one address for every service.
//
// The caller's credential goes along, except a credential only an
// emulator takes (the owner credential, an unsigned ID token loupe
// minted): production would refuse it, so the request goes without it
// and the log says so once per service.
package passthrough

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/requestlog"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/websocket"
	"google.golang.org/grpc"
)

// route is one path prefix of a service and the production host serving it.
type route struct {
	prefix, host string
	strip        string // the part of the prefix production's path lacks
}

// routes are the paths each service that can be passed through answers.
var routes = map[string][]route{
	"storage": {
		{prefix: "/v0/", host: "firebasestorage.googleapis.com"},
		{prefix: "/storage/v1/", host: "storage.googleapis.com"},
		{prefix: "/upload/storage/v1/", host: "storage.googleapis.com"},
		{prefix: "/download/storage/v1/", host: "storage.googleapis.com"},
	},
	"auth": {
		{prefix: "/identitytoolkit.googleapis.com/", host: "identitytoolkit.googleapis.com", strip: "/identitytoolkit.googleapis.com"},
		{prefix: "/securetoken.googleapis.com/", host: "securetoken.googleapis.com", strip: "/securetoken.googleapis.com"},
	},
	// Firestore's REST documents API and the web SDK's WebChannel streams;
	// its gRPC service goes through grpcService.
	"firestore": {
		{prefix: "/v1/projects/{project}/databases/", host: firestoreHost},
		{prefix: "/google.firestore.v1.Firestore/", host: firestoreHost},
	},
}

const firestoreHost = "firestore.googleapis.com"

// grpcServices are the gRPC services each service passed through answers.
var grpcServices = map[string]string{"firestore": "google.firestore.v1.Firestore"}

// Services are the services that can be passed through (the Realtime
// Database's paths are in database.go).
var Services = []string{"auth", "database", "firestore", "storage"}

// Options configure a Service.
type Options struct {
	// Services are the services to forward (each one of Services).
	Services []string
	// Upstream is host:port of an emulator (another loupe) to forward to
	// over HTTP, with the paths as they come; "" forwards to production.
	Upstream string
	// Project is the project whose default Realtime Database instance a
	// request naming no namespace goes to.
	Project string
	// Credentials are loupe's: the tokens it mints are never forwarded.
	Credentials identity.Credentials
	// Log receives an entry per forwarded request (nil: none).
	Log    *requestlog.Log
	Logger *slog.Logger
}

// Service forwards the requests of the services of Options.
type Service struct {
	o      Options
	warned sync.Map // service → the unsigned-token warning was logged

	connOnce sync.Once
	conn     *grpc.ClientConn // to the upstream, for gRPC services
	connErr  error

	dbHosts databaseHosts // production's hosts of Realtime Database namespaces
	// transport carries the passed-through HTTP requests (upstreamTransport).
	transport http.RoundTripper
}

// New checks o and returns its Service.
func New(o Options) (*Service, error) {
	for _, s := range o.Services {
		if !slices.Contains(Services, s) {
			return nil, fmt.Errorf("--pass-through: loupe forwards %s, not %q", strings.Join(Services, ", "), s)
		}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Service{o: o, transport: upstreamTransport()}, nil
}

// Name implements server.Service.
func (s *Service) Name() string { return "passthrough" }

// Register implements server.Service: each forwarded service's paths.
func (s *Service) Register(r *server.Routes) {
	for _, name := range s.o.Services {
		for _, rt := range routes[name] {
			r.HTTP.Handle(rt.prefix, s.proxy(name, rt))
		}
		if svc, ok := grpcServices[name]; ok {
			r.GRPCFallback(svc, s.proxyGRPC(name))
		}
		if name == "database" {
			s.registerDatabase(r)
		}
	}
}

// Close implements server.Closer: it closes the upstream connection.
func (s *Service) Close() error {
	if s.conn != nil {
		return s.conn.Close()
	}
	return nil
}

// Destination is where requests of a forwarded service go, for start-up
// messages.
func (s *Service) Destination(service string) string {
	if s.o.Upstream != "" {
		return "http://" + s.o.Upstream
	}
	if service == "database" {
		return "https://NAMESPACE." + databaseProductionDomain
	}
	var hosts []string
	for _, rt := range routes[service] {
		if !slices.Contains(hosts, rt.host) {
			hosts = append(hosts, "https://"+rt.host)
		}
	}
	return strings.Join(hosts, ", ")
}

// upstreamHeaderTimeout bounds how long a passed-through request waits for
// the upstream's answer to begin (its status and headers): longer than any
// production API holds a request (long polls answer within a minute), so a
// hung upstream is a 502 rather than a request that never ends.
var upstreamHeaderTimeout = 90 * time.Second

// upstreamTransport is http.DefaultTransport's settings with
// upstreamHeaderTimeout.
func upstreamTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = upstreamHeaderTimeout
	return t
}

// proxy forwards one route's requests, streaming, and records each.
func (s *Service) proxy(service string, rt route) http.Handler {
	target := &url.URL{Scheme: "https", Host: rt.host}
	if s.o.Upstream != "" {
		target = &url.URL{Scheme: "http", Host: s.o.Upstream}
	}
	rp := &httputil.ReverseProxy{
		Transport: s.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			if s.o.Upstream == "" && rt.strip != "" {
				pr.Out.URL.Path = strings.TrimPrefix(pr.Out.URL.Path, rt.strip)
				pr.Out.URL.RawPath = ""
			}
			pr.Out.Host = target.Host
			if s.emulatorOnly(pr.In.Header.Get("Authorization")) {
				pr.Out.Header.Del("Authorization")
				s.heldBack(service)
			}
		},
		FlushInterval:  -1, // stream responses as they come
		ModifyResponse: server.OwnCORS,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			s.o.Logger.Warn("pass-through: the upstream did not answer", "service", service, "upstream", target.Host, "error", err)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": http.StatusBadGateway,
				"message": "loupe passes " + service + " through to " + target.Host + ", which did not answer"}})
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/channel") && s.holdBackChannelCredential(r) {
			s.heldBack(service)
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		end := s.record(requestlog.Entry{Service: service, Method: r.Method, Path: r.URL.Path}, isStream(r), target.Host)
		defer func() { end(rec.status, "") }() // also when the proxy aborts (the client went away mid-stream)
		rp.ServeHTTP(rec, r)
	})
}

// isStream reports whether a request opens a stream: a WebSocket, an event
// stream, or a WebChannel's long GET.
func isStream(r *http.Request) bool {
	return websocket.HeaderHas(r.Header, "Upgrade", "websocket") || strings.Contains(r.Header.Get("Accept"), "text/event-stream") ||
		r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/channel")
}

// record logs a forwarded call: a stream at once, as open, and again when
// it ends; any other call when it ends. end takes the status the caller was
// answered and a note on how the call ended.
func (s *Service) record(e requestlog.Entry, stream bool, host string) (end func(status int, note string)) {
	e.Time, e.PassThrough = time.Now().UTC(), true
	e.Outcome, e.Status, e.Message = requestlog.Allowed, http.StatusOK, "passed through to "+host
	if stream {
		e = s.o.Log.OpenStream(e)
	}
	return func(status int, note string) {
		e.Status = status
		if status >= 400 {
			e.Outcome = requestlog.Error
		}
		if note != "" {
			e.Message += " (" + note + ")"
		}
		if stream {
			s.o.Log.EndStream(e)
		} else {
			s.o.Log.Add(e)
		}
	}
}

// heldBack logs, once per service, that an emulator-only credential was
// not forwarded.
func (s *Service) heldBack(service string) {
	if _, done := s.warned.LoadOrStore(service, true); !done {
		s.o.Logger.Warn("pass-through: a credential only an emulator takes (a locally minted ID token, or owner) was not forwarded; the request went without it, so production judges it as unauthenticated. Sign in against production to send real tokens.",
			"service", service)
	}
}

// holdBackChannelCredential drops an emulator-only Authorization from a
// WebChannel request, where the web SDK sends its headers inside the
// request: in the $httpHeaders parameter, or the handshake form's headers
// field. It reports whether there was one.
func (s *Service) holdBackChannelCredential(r *http.Request) bool {
	dropped := false
	q := r.URL.Query()
	if h := q.Get("$httpHeaders"); h != "" {
		if kept, ok := s.withoutEmulatorAuth(h); ok {
			q.Set("$httpHeaders", kept)
			r.URL.RawQuery = q.Encode()
			dropped = true
		}
	}
	if r.Method == http.MethodPost && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
		_ = r.Body.Close()
		if err != nil {
			body = nil
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if form, err := url.ParseQuery(string(body)); err == nil && form.Has("headers") {
			if kept, ok := s.withoutEmulatorAuth(form.Get("headers")); ok {
				form.Set("headers", kept)
				enc := form.Encode()
				r.Body = io.NopCloser(strings.NewReader(enc))
				r.ContentLength = int64(len(enc))
				r.Header.Set("Content-Length", strconv.Itoa(len(enc)))
				dropped = true
			}
		}
	}
	return dropped
}

// withoutEmulatorAuth is a WebChannel header block ("Name:value\r\n"…)
// without its Authorization line when that carries an emulator-only
// credential, and whether it had one.
func (s *Service) withoutEmulatorAuth(block string) (string, bool) {
	var kept []string
	dropped := false
	for _, line := range strings.Split(block, "\r\n") {
		name, value, _ := strings.Cut(line, ":")
		if strings.EqualFold(strings.TrimSpace(name), "Authorization") && s.emulatorOnly(strings.TrimSpace(value)) {
			dropped = true
			continue
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\r\n"), dropped
}

// emulatorOnly reports whether an Authorization header carries a
// credential only an emulator takes.
func (s *Service) emulatorOnly(header string) bool {
	scheme, token, ok := strings.Cut(header, " ")
	return ok && strings.EqualFold(scheme, "Bearer") && s.o.Credentials.EmulatorOnly(strings.TrimSpace(token))
}

// statusRecorder keeps the status a handler answered, and passes Flush on
// (the proxy streams).
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
