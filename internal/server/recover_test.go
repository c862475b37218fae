package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// panickingService's handlers panic, as a bug would: the gRPC one, and the
// HTTP ones under a lock they release with defer, before or after they
// began their answer.
type panickingService struct {
	healthpb.UnimplementedHealthServer
	mu *sync.Mutex
}

func (panickingService) Name() string { return "panicking" }
func (p panickingService) Register(r *Routes) {
	healthpb.RegisterHealthServer(r.GRPC, p)
	r.HTTP.HandleFunc("GET /panic", func(w http.ResponseWriter, req *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if req.URL.Query().Get("after") != "" {
			_, _ = io.WriteString(w, "half an answer")
			w.(http.Flusher).Flush()
		}
		var names []string
		_ = names[len(req.URL.Path)] // index out of range
	})
}
func (panickingService) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	panic("bug")
}

func TestServer_GRPCPanicIsInternal(t *testing.T) {
	s := New(Options{Host: "127.0.0.1"}, []Service{panickingService{mu: &sync.Mutex{}}})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	defer func() { stop(); <-done }()
	conn, err := grpc.NewClient(strings.TrimPrefix(s.URL(), "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	callCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 2 { // the server survives the first panic and answers again
		_, err := healthpb.NewHealthClient(conn).Check(callCtx, &healthpb.HealthCheckRequest{})
		if status.Code(err) != codes.Internal {
			t.Fatalf("Check: %v, want Internal", err)
		}
	}
}

// TestServer_HTTPPanicEndsWithItsRequest: a handler that panics before it
// answers gets 500 INTERNAL, one that had begun its answer has its
// connection cut, and the lock each held is free again: the next request
// is served.
func TestServer_HTTPPanicEndsWithItsRequest(t *testing.T) {
	s := New(Options{Host: "127.0.0.1"}, []Service{panickingService{mu: &sync.Mutex{}}})
	h := s.Handler()
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(h)
	defer ts.Close()
	srv := ts.URL
	client := &http.Client{Timeout: 10 * time.Second}
	for range 2 {
		res, err := client.Get(srv + "/panic")
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct {
				Code   int    `json:"code"`
				Status string `json:"status"`
			} `json:"error"`
		}
		err = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusInternalServerError || body.Error.Status != "INTERNAL" {
			t.Fatalf("GET /panic: HTTP %d %+v (%v), want 500 INTERNAL", res.StatusCode, body, err)
		}
		res, err = client.Get(srv + "/panic?after=1")
		if err == nil {
			_, err = io.ReadAll(res.Body)
			res.Body.Close()
		}
		if err == nil {
			t.Fatalf("GET /panic?after=1: the half-written answer ended cleanly, want a cut connection")
		}
	}
}
