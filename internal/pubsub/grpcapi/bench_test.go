package grpcapi_test

import (
	"bytes"
	"context"
	"net"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/pubsub/v2"
	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/loupe-dev/loupe/internal/identity"
	engine "github.com/loupe-dev/loupe/internal/pubsub"
	"github.com/loupe-dev/loupe/internal/pubsub/grpcapi"
	"google.golang.org/grpc"
)

// BenchmarkPublishThenPull publishes b.N messages of 1 KiB through the Go
// client (its batching, every result awaited) to an engine kept on disk in
// the benchmark's process, then receives and acks them all by streaming
// pull; publish-msg/s and pull-msg/s are reported. As bench-peers' Pub/Sub
// row, with the server visible to -cpuprofile.
func BenchmarkPublishThenPull(b *testing.B) {
	e, err := engine.Open(engine.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := grpc.NewServer()
	grpcapi.Register(s, grpcapi.New(e, identity.Local))
	go s.Serve(lis)
	b.Cleanup(func() { s.Stop(); e.Close() })
	b.Setenv("PUBSUB_EMULATOR_HOST", lis.Addr().String())
	ctx := context.Background()
	client, err := pubsub.NewClient(ctx, project)
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	topic, sub := "projects/"+project+"/topics/bench", "projects/"+project+"/subscriptions/bench"
	if _, err := client.TopicAdminClient.CreateTopic(ctx, &pb.Topic{Name: topic}); err != nil {
		b.Fatal(err)
	}
	if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pb.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: 60}); err != nil {
		b.Fatal(err)
	}
	pub := client.Publisher(topic)
	defer pub.Stop()
	body := bytes.Repeat([]byte("m"), 1024)
	b.ResetTimer()
	results := make([]*pubsub.PublishResult, b.N)
	for i := range results {
		results[i] = pub.Publish(ctx, &pubsub.Message{Data: body})
	}
	for _, r := range results {
		if _, err := r.Get(ctx); err != nil {
			b.Fatal(err)
		}
	}
	published := b.Elapsed()
	rctx, cancel := context.WithCancel(ctx)
	var got atomic.Int64
	err = client.Subscriber(sub).Receive(rctx, func(_ context.Context, m *pubsub.Message) {
		m.Ack()
		if got.Add(1) == int64(b.N) {
			cancel()
		}
	})
	if got.Load() != int64(b.N) {
		b.Fatalf("received %d of %d: %v", got.Load(), b.N, err)
	}
	b.ReportMetric(float64(b.N)/published.Seconds(), "publish-msg/s")
	b.ReportMetric(float64(b.N)/(b.Elapsed()-published).Seconds(), "pull-msg/s")
}
