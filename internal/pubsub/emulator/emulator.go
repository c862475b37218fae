// Package emulator plugs the Pub/Sub engine into loupe serve: it opens the
// engine on the service's data dir, registers the gRPC services that
// PUBSUB_EMULATOR_HOST clients call and the REST API beside them, and pushes push subscriptions'
// messages over HTTP.
package emulator

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/pubsub"
	"github.com/loupe-dev/loupe/internal/pubsub/grpcapi"
	"github.com/loupe-dev/loupe/internal/pubsub/restapi"
	"github.com/loupe-dev/loupe/internal/server"
)

// Service is the pubsub service of loupe serve.
type Service struct {
	env    server.Env
	Engine *pubsub.Engine
}

// New opens the engine: on disk under env.DataDir, or in memory.
func New(env server.Env) (*Service, error) {
	e, err := pubsub.Open(pubsub.Options{Dir: env.DataDir})
	if err != nil {
		return nil, err
	}
	e.SetPusher(httpPusher{client: &http.Client{Timeout: pushTimeout}})
	return &Service{env: env, Engine: e}, nil
}

// Name implements server.Service.
func (s *Service) Name() string { return "pubsub" }

// Register implements server.Service.
func (s *Service) Register(r *server.Routes) {
	srv := grpcapi.New(s.Engine, s.env.Credentials)
	grpcapi.Register(r.GRPC, srv)
	restapi.Register(r.HTTP, srv)
	r.Admin("GET /emulator/v1/projects/{project}/pubsub", func(w http.ResponseWriter, req *http.Request) {
		httpjson.Write(w, http.StatusOK, map[string]any{"topics": s.Engine.Overview(req.PathValue("project"))})
	})
	r.Admin("GET /emulator/v1/projects/{project}/pubsub:changes", func(w http.ResponseWriter, req *http.Request) {
		httpjson.ServeChanges(w, req, s.Engine.Changes())
	})
}

// Close implements server.Closer.
func (s *Service) Close() error { return s.Engine.Close() }

// pushTimeout bounds one push request (production's push deadline is the
// subscription's ack deadline, at most 10 minutes).
const pushTimeout = 60 * time.Second

// httpPusher posts push messages with net/http.
type httpPusher struct{ client *http.Client }

// Push implements pubsub.Pusher.
func (p httpPusher) Push(ctx context.Context, endpoint string, header map[string]string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, nil
}
