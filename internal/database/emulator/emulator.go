// Package emulator plugs the Realtime Database engine into loupe serve: the
// WebSocket protocol of the SDKs (websocket.go, conn.go), REST and its
// event streams (rest.go), and the emulator's own endpoints (rules,
// clearing data). Requests name their namespace with ?ns=, or with a
// NAME.firebaseio.com (or firebasedatabase.app) host; without either they
// go to the project's default instance, {project}-default-rtdb.
package emulator

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/loupe-dev/loupe/internal/database"
	"github.com/loupe-dev/loupe/internal/database/rules"
	"github.com/loupe-dev/loupe/internal/server"
	"golang.org/x/sync/semaphore"
)

// Service is the database service of loupe serve.
type Service struct {
	env    server.Env
	Engine *database.Engine
	// OwnPort is the database's own port (9000 by default), on which it
	// answers every path; nil or false when it has none.
	OwnPort func() (int, bool)
	// Rules installs a namespace's rules (PUT /.settings/rules.json); nil
	// answers 404 there.
	Rules RulesSetter
	// StrictIndexes refuses queries that order by an unindexed child or
	// value, as production's REST API does, instead of answering them with
	// a warning.
	StrictIndexes bool

	mu      sync.Mutex
	conns   map[*conn]struct{}
	lp      map[string]*lpSession // long-polling sessions by id
	streams map[*stream]struct{}  // REST event streams
	// behind is the bytes waiting in every connection's outbox.
	behind atomic.Int64
	// bodies bounds the large REST write bodies read and decoded at once
	// (reserveBody).
	bodies     *semaphore.Weighted
	bodiesOnce sync.Once
}

// RulesSetter holds the namespaces' rules.
type RulesSetter interface {
	// SetDatabaseRules compiles and installs source as ns's rules; a
	// compile error names line and column.
	SetDatabaseRules(ns, source string) error
	// DatabaseRules is ns's rules source, and whether rules are in force.
	DatabaseRules(ns string) (string, bool)
	// DatabaseCoverage is how ns's rules have been evaluated, and whether
	// rules are in force.
	DatabaseCoverage(ns string) ([]rules.RuleCoverage, bool)
}

// New opens the engine: on disk under env.DataDir, or in memory.
func New(env server.Env) (*Service, error) {
	e, err := database.Open(database.Options{Dir: env.DataDir, Logger: env.Logger})
	if err != nil {
		return nil, err
	}
	return &Service{env: env, Engine: e, conns: map[*conn]struct{}{}, lp: map[string]*lpSession{},
		streams: map[*stream]struct{}{}}, nil
}

// RulesChanged judges every open listen again under the rules now in force
// and revokes those no longer allowed: a session's listen is answered with a
// listen revoked message (the SDKs fail it with permission_denied), an
// event stream gets a cancel event and ends. The rules' owner calls it after
// it installs rules.
func (s *Service) RulesChanged() {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	streams := make([]*stream, 0, len(s.streams))
	for st := range s.streams {
		streams = append(streams, st)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.enqueue(c.rejudge)
	}
	for _, st := range streams {
		if s.Engine.MayListen(context.Background(), st.ns, st.path, st.query, st.caller) != nil {
			st.revoke()
		}
	}
}

// Name implements server.Service.
func (s *Service) Name() string { return "database" }

// Register implements server.Service: the WebSocket and long-polling paths
// on every port, and REST (any path ending in .json) for requests that
// name a namespace or reach the database's own port.
func (s *Service) Register(r *server.Routes) {
	r.HTTP.HandleFunc("/.ws", s.serveWebSocket)
	r.HTTP.HandleFunc("GET /.lp", s.serveLongPoll)
	r.Admin("PUT /.settings/rules.json", s.putRules)
	r.Admin("GET /.settings/rules.json", s.getRules)
	r.Admin("GET /.inspect/coverage", s.coverage)
	r.Admin("DELETE /emulator/v1/database", s.clearAll)
	r.Admin("GET /emulator/v1/database/namespaces", s.namespaces)
	r.Admin("GET /emulator/v1/database/children", s.children)
	r.Admin("GET /emulator/v1/database/changes", s.changes)
	r.Fallback(s.claims, http.HandlerFunc(s.serveREST))
}

// claims reports whether a request no route matched is the database's.
func (s *Service) claims(r *http.Request) bool {
	if s.onOwnPort(r) {
		return true
	}
	if !strings.HasSuffix(r.URL.Path, ".json") {
		return false
	}
	return r.URL.Query().Has("ns") || database.HostNamespace(r.Host) != ""
}

func (s *Service) onOwnPort(r *http.Request) bool {
	if s.OwnPort == nil {
		return false
	}
	port, ok := s.OwnPort()
	if !ok {
		return false
	}
	addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	tcp, _ := addr.(*net.TCPAddr)
	return tcp != nil && tcp.Port == port
}

// namespace is the instance a request names: ?ns=, the host's first label
// on a Realtime Database host, else the project's default instance.
func (s *Service) namespace(r *http.Request) string {
	if ns := r.URL.Query().Get("ns"); ns != "" {
		return ns
	}
	if ns := database.HostNamespace(r.Host); ns != "" {
		return ns
	}
	return s.DefaultNamespace()
}

// DefaultNamespace is the project's default instance.
func (s *Service) DefaultNamespace() string { return s.env.ProjectID + "-default-rtdb" }

// Open implements server.Opener: it loads --import when given.
func (s *Service) Open(ctx context.Context) error {
	if s.env.ImportDir != "" {
		return s.Engine.Import(ctx, s.env.ImportDir)
	}
	return nil
}

// Import implements server.Importer.
func (s *Service) Import(ctx context.Context, dir string) error { return s.Engine.Import(ctx, dir) }

// Export implements server.Exporter.
func (s *Service) Export(_ context.Context, dir string) error { return s.Engine.Export(dir) }

// Close implements server.Closer: it drops the connections (their
// onDisconnect writes run first) and closes the engine.
func (s *Service) Close() error {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.shutdown()
	}
	return s.Engine.Close()
}

// clearAll deletes every namespace's data (or ?ns='s).
func (s *Service) clearAll(w http.ResponseWriter, r *http.Request) {
	if err := s.Engine.Clear(r.Context(), r.URL.Query().Get("ns")); err != nil {
		restError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}\n"))
}
