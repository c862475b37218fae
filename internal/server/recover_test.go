package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// panickingService's gRPC handler panics, as a bug would.
type panickingService struct {
	healthpb.UnimplementedHealthServer
}

func (panickingService) Name() string         { return "panicking" }
func (p panickingService) Register(r *Routes) { healthpb.RegisterHealthServer(r.GRPC, p) }
func (panickingService) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	panic("bug")
}

func TestServer_GRPCPanicIsInternal(t *testing.T) {
	s := New(Options{Host: "127.0.0.1"}, []Service{panickingService{}})
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
