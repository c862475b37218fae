// Package emulator plugs the Firestore engine into loupe serve: it opens the
// engine on the service's data dir, registers the gRPC service and the
// emulator's own endpoints, and loads and writes exports. Security rules are
// not its business: the composition root installs an authorizer in Engine.
package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/firestore/grpcapi"
	"github.com/loupe-dev/loupe/internal/firestore/restapi"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/webchannel"
)

// Service is the firestore service of loupe serve.
type Service struct {
	env      server.Env
	Engine   *firestore.Engine
	channels []*webchannel.Handler
	pulls    *pullCheckpoints
}

// New opens the engine: on disk under env.DataDir, or in memory.
func New(env server.Env) (*Service, error) {
	e, err := firestore.Open(firestore.Options{Dir: env.DataDir})
	if err != nil {
		return nil, err
	}
	return &Service{env: env, Engine: e, pulls: newPullCheckpoints(env.DataDir)}, nil
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
	r.Admin("GET /emulator/v1/projects/{project}/databases/{database}/indexes", s.indexes)
	r.Admin("POST /emulator/v1/projects/{project}/databases/{database}/documents:restore", s.restore)
	r.Admin("GET /emulator/v1/projects/{project}/databases/{database}/pulls/{pull}", s.pullState)
	r.Admin("DELETE /emulator/v1/projects/{project}/databases/{database}/pulls/{pull}", s.forgetPull)
}

// Open implements server.Opener: it loads --import when given, then builds
// the collection-order and declared indexes in the background.
func (s *Service) Open(context.Context) error {
	if s.env.ImportDir != "" {
		if err := s.Engine.Import(s.env.ImportDir); err != nil {
			return err
		}
	}
	go s.Engine.BuildIndexes()
	return nil
}

// Import implements server.Importer, telling the context's
// server.ImportProgress how many documents it has read.
func (s *Service) Import(ctx context.Context, dir string) error {
	return s.Engine.ImportWithProgress(dir, server.ImportProgress(ctx))
}

// Export implements server.Exporter.
func (s *Service) Export(_ context.Context, dir string) error { return s.Engine.Export(dir) }

// Close implements server.Closer.
func (s *Service) Close() error {
	for _, c := range s.channels {
		c.Close()
	}
	return s.Engine.Close()
}

// clear deletes every document of a database, as clearFirestore() asks,
// and the checkpoints of the pulls into it.
func (s *Service) clear(w http.ResponseWriter, r *http.Request) {
	db := "projects/" + r.PathValue("project") + "/databases/" + r.PathValue("database")
	if err := s.Engine.Clear(db); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := s.pulls.forget(db, ""); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}\n"))
}

// maxRestoreBody bounds a restore request (loupe data pull sends at most
// 16 MiB at a time).
const maxRestoreBody = 64 << 20

// restore puts documents with their own createTime and updateTime (loupe
// data pull's way in): the body is {"documents": [Document, …]} in the
// REST API's JSON, the answer {"changed": N}. See Engine.Restore. With
// "checkpoint": {"pull": ID, "state": JSON} the state is saved as that
// pull's once the documents are stored (GET .../pulls/ID reads it back).
func (s *Service) restore(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRestoreBody))
	if err != nil {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "the request body is larger than 64 MiB: send fewer documents at a time"))
		return
	}
	var body struct {
		Documents  []json.RawMessage `json:"documents"`
		Checkpoint *checkpoint       `json:"checkpoint"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "Invalid JSON payload received. "+err.Error()))
		return
	}
	if body.Checkpoint != nil {
		if err := body.Checkpoint.check(); err != nil {
			httpjson.Error(w, err)
			return
		}
	}
	docs := make([]*pb.Document, len(body.Documents))
	for i, raw := range body.Documents {
		docs[i] = &pb.Document{}
		if err := protojson.Unmarshal(raw, docs[i]); err != nil {
			httpjson.Error(w, errs.New(errs.InvalidArgument, fmt.Sprintf("Invalid JSON payload received at 'documents[%d]': %v", i, err)))
			return
		}
	}
	db := "projects/" + r.PathValue("project") + "/databases/" + r.PathValue("database")
	n, err := s.Engine.Restore(r.Context(), db, docs)
	if err == nil && body.Checkpoint != nil {
		err = s.pulls.put(db, body.Checkpoint.Pull, body.Checkpoint.State)
	}
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"changed": n})
}
