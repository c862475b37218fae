// Package emulator plugs the Firestore engine into loupe serve: it opens the
// engine on the service's data dir, registers the gRPC service and the
// emulator's own endpoints, and loads and writes exports.
package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/firestore/grpcapi"
	"github.com/loupe-dev/loupe/internal/firestore/restapi"
	"github.com/loupe-dev/loupe/internal/guard"
	"github.com/loupe-dev/loupe/internal/rules"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/webchannel"
)

// Service is the firestore service of loupe serve.
type Service struct {
	env      server.Env
	Engine   *firestore.Engine
	Rules    guard.Ruleset
	channels []*webchannel.Handler
}

// New opens the engine: on disk under env.DataDir, or in memory.
func New(env server.Env) (*Service, error) {
	e, err := firestore.Open(firestore.Options{Dir: env.DataDir})
	if err != nil {
		return nil, err
	}
	s := &Service{env: env, Engine: e}
	e.SetAuthorizer(&guard.Firestore{Rules: &s.Rules, Engine: e})
	return s, nil
}

// Name implements server.Service.
func (s *Service) Name() string { return "firestore" }

// Register implements server.Service.
func (s *Service) Register(r *server.Routes) {
	grpcapi.Register(r.GRPC, s.Engine, s.env.Credentials)
	restapi.Register(r.HTTP, s.Engine, s.env.Credentials)
	listen := webchannel.NewHandler(s.openListen, webchannel.Options{})
	write := webchannel.NewHandler(s.openWrite, webchannel.Options{})
	s.channels = append(s.channels, listen, write)
	r.HTTP.Handle("/google.firestore.v1.Firestore/Listen/channel", listen)
	r.HTTP.Handle("/google.firestore.v1.Firestore/Write/channel", write)
	r.Admin("DELETE /emulator/v1/projects/{project}/databases/{database}/documents", s.clear)
	r.Admin("PUT /emulator/v1/projects/{target}", s.putRules)
}

// Open implements server.Opener: it loads --import when given.
func (s *Service) Open(context.Context) error {
	if s.env.ImportDir == "" {
		return nil
	}
	return s.Engine.Import(s.env.ImportDir)
}

// Import implements server.Importer.
func (s *Service) Import(_ context.Context, dir string) error { return s.Engine.Import(dir) }

// Export implements server.Exporter.
func (s *Service) Export(_ context.Context, dir string) error { return s.Engine.Export(dir) }

// Close implements server.Closer.
func (s *Service) Close() error {
	for _, c := range s.channels {
		c.Close()
	}
	return s.Engine.Close()
}

// putRules replaces the rules in force (what rules-unit-testing calls):
// PUT /emulator/v1/projects/{p}:securityRules {"rules":{"files":[{"name","content"}]}}.
func (s *Service) putRules(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.PathValue("target"), ":securityRules") {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Rules struct {
			Files []struct{ Name, Content string } `json:"files"`
		} `json:"rules"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil || len(body.Rules.Files) == 0 {
		http.Error(w, `body must be {"rules":{"files":[{"name":…,"content":…}]}}`, http.StatusBadRequest)
		return
	}
	f := body.Rules.Files[0]
	rs, err := rules.Compile(f.Content, f.Name)
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": 400, "message": err.Error(), "status": "INVALID_ARGUMENT"}})
		return
	}
	s.Rules.Set(rs)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}\n"))
}

// clear deletes every document of a database, as clearFirestore() asks.
func (s *Service) clear(w http.ResponseWriter, r *http.Request) {
	db := "projects/" + r.PathValue("project") + "/databases/" + r.PathValue("database")
	if err := s.Engine.Clear(db); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}\n"))
}
