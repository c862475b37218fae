package grpcapi_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/pubsub/v2"
	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
)

// BenchmarkPublishThenPull publishes b.N messages of 1 KiB through the Go
// client (its batching, every result awaited) to an engine kept on disk in
// the benchmark's process, then receives and acks them all by streaming
// pull; publish-msg/s and pull-msg/s are reported. As bench-peers' Pub/Sub
// row, with the server visible to -cpuprofile.
func BenchmarkPublishThenPull(b *testing.B) {
	host, _ := serveDir(b, b.TempDir())
	c := client(b, host)
	setup(b, c, "bench", &pb.Subscription{Name: name("subscriptions", "bench"), AckDeadlineSeconds: 60})
	ctx := context.Background()
	pub := c.Publisher(name("topics", "bench"))
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
	err := c.Subscriber(name("subscriptions", "bench")).Receive(rctx, func(_ context.Context, m *pubsub.Message) {
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
