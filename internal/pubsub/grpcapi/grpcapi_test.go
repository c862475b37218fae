package grpcapi_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/loupe-dev/loupe/internal/loupetest/inproc"
	engine "github.com/loupe-dev/loupe/internal/pubsub"
	"github.com/loupe-dev/loupe/internal/pubsub/grpcapi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const project = "demo-loupe"

// serve runs loupe's Pub/Sub in the test process (the composition root's
// handler, push included) on a loopback listener that speaks gRPC over
// HTTP/2 without TLS, as loupe serve does, and returns its host:port.
func serve(t *testing.T) string {
	t.Helper()
	return serveHarness(t, inproc.Start(t, inproc.Options{Only: []string{"pubsub"}}))
}

// serveHarness serves h's handler as serve does.
func serveHarness(t *testing.T, h *inproc.Harness) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h.Handler())
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// serveDir serves an engine kept in dir over gRPC on a loopback port, and
// returns its address and a stop that closes the server and the engine.
func serveDir(t testing.TB, dir string) (string, func()) {
	t.Helper()
	e, err := engine.Open(engine.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	grpcapi.Register(s, grpcapi.New(e, identity.Local))
	go s.Serve(lis)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			s.Stop()
			if err := e.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	return lis.Addr().String(), stop
}

// client is cloud.google.com/go/pubsub pointed at host, as
// PUBSUB_EMULATOR_HOST points it at the official emulator.
func client(t testing.TB, host string) *pubsub.Client {
	t.Helper()
	t.Setenv("PUBSUB_EMULATOR_HOST", host)
	c, err := pubsub.NewClient(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func name(kind, id string) string { return "projects/" + project + "/" + kind + "/" + id }

// setup creates a topic and a subscription on it.
func setup(t testing.TB, c *pubsub.Client, topic string, sub *pb.Subscription) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.TopicAdminClient.CreateTopic(ctx, &pb.Topic{Name: name("topics", topic)}); err != nil {
		t.Fatal(err)
	}
	sub.Topic = name("topics", topic)
	if _, err := c.SubscriptionAdminClient.CreateSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
}

// publish publishes the payloads and waits for their ids.
func publish(t *testing.T, p *pubsub.Publisher, msgs ...*pubsub.Message) []string {
	t.Helper()
	var ids []string
	for _, m := range msgs {
		id, err := p.Publish(context.Background(), m).Get(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// pullNow is a unary pull that does not wait: what is deliverable now.
func pullNow(t *testing.T, c *pubsub.Client, sub string) []*pb.ReceivedMessage {
	t.Helper()
	req := &pb.PullRequest{Subscription: name("subscriptions", sub), MaxMessages: 100}
	//lint:ignore SA1019 the test checks that loupe still honours it, as production does.
	req.ReturnImmediately = true
	resp, err := c.SubscriptionAdminClient.Pull(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.ReceivedMessages
}

// receive runs Receive until n messages were handled by handle.
func receive(t *testing.T, s *pubsub.Subscriber, n int, handle func(*pubsub.Message)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	seen := 0
	err := s.Receive(ctx, func(_ context.Context, m *pubsub.Message) {
		// The client calls this from several goroutines: handle runs
		// under the lock, so that it may count into a map.
		mu.Lock()
		defer mu.Unlock()
		handle(m)
		if seen++; seen == n {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < n {
		t.Fatalf("received %d messages, want %d", seen, n)
	}
}

// TestGoClient_PublishReceiveAck: the Go client creates a topic and a
// subscription, publishes, receives over streaming pull and acks; a nacked
// message comes again; an acked one does not.
func TestGoClient_PublishReceiveAck(t *testing.T) {
	c := client(t, serve(t))
	setup(t, c, "orders", &pb.Subscription{Name: name("subscriptions", "billing")})
	ids := publish(t, c.Publisher("orders"),
		&pubsub.Message{Data: []byte("first"), Attributes: map[string]string{"kind": "new"}},
		&pubsub.Message{Data: []byte("second")})
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("ids = %v", ids)
	}
	got := map[string]int{}
	var attrs map[string]string
	receive(t, c.Subscriber("billing"), 3, func(m *pubsub.Message) {
		got[string(m.Data)]++
		if string(m.Data) == "first" {
			attrs = m.Attributes
		}
		if string(m.Data) == "second" && got["second"] == 1 {
			m.Nack() // delivered again
			return
		}
		m.Ack()
	})
	if got["first"] != 1 || got["second"] != 2 {
		t.Fatalf("deliveries = %v, want first once and second twice", got)
	}
	if attrs["kind"] != "new" {
		t.Errorf("attributes = %v", attrs)
	}
	loupetest.Eventually(t, "the acks", func() bool { return len(pullNow(t, c, "billing")) == 0 })
}

// TestGoClient_Errors: the codes the client libraries see for a missing
// topic, a taken name and a bad one.
func TestGoClient_Errors(t *testing.T) {
	c := client(t, serve(t))
	ctx := context.Background()
	_, err := c.Publisher("nowhere").Publish(ctx, &pubsub.Message{Data: []byte("x")}).Get(ctx)
	if status.Code(err) != codes.NotFound {
		t.Errorf("publish to a missing topic: %v, want NotFound", err)
	}
	if _, err := c.TopicAdminClient.CreateTopic(ctx, &pb.Topic{Name: name("topics", "topic-1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TopicAdminClient.CreateTopic(ctx, &pb.Topic{Name: name("topics", "topic-1")}); status.Code(err) != codes.AlreadyExists {
		t.Errorf("second create: %v, want AlreadyExists", err)
	}
	if _, err := c.TopicAdminClient.CreateTopic(ctx, &pb.Topic{Name: name("topics", "1bad")}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("bad name: %v, want InvalidArgument", err)
	}
	_, err = c.SubscriptionAdminClient.CreateSubscription(ctx, &pb.Subscription{Name: name("subscriptions", "sub-1"), Topic: name("topics", "missing")})
	if status.Code(err) != codes.NotFound {
		t.Errorf("subscription on a missing topic: %v, want NotFound", err)
	}
	_, err = c.SubscriptionAdminClient.Pull(ctx, &pb.PullRequest{Subscription: name("subscriptions", "missing"), MaxMessages: 1})
	if status.Code(err) != codes.NotFound {
		t.Errorf("pull of a missing subscription: %v, want NotFound", err)
	}
}

// TestGoClient_OrderingKeys: on a subscription with message ordering, the
// messages of a key arrive in publish order.
func TestGoClient_OrderingKeys(t *testing.T) {
	c := client(t, serve(t))
	setup(t, c, "events", &pb.Subscription{Name: name("subscriptions", "ordered"), EnableMessageOrdering: true})
	p := c.Publisher("events")
	p.EnableMessageOrdering = true
	var want []string
	for i := range 20 {
		d := string(rune('a' + i))
		want = append(want, d)
		p.Publish(context.Background(), &pubsub.Message{Data: []byte(d), OrderingKey: "user-1"})
	}
	p.Flush()
	var got []string
	var mu sync.Mutex
	receive(t, c.Subscriber("ordered"), len(want), func(m *pubsub.Message) {
		mu.Lock()
		got = append(got, string(m.Data))
		mu.Unlock()
		m.Ack()
	})
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order = %v, want %v", got, want)
		}
	}
}

// TestDurable_UnackedMessagesSurviveARestart: topics, subscriptions and
// unacked messages are kept in the data dir; acked ones are not delivered
// again.
func TestDurable_UnackedMessagesSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	host, stop := serveDir(t, dir)
	c := client(t, host)
	setup(t, c, "jobs", &pb.Subscription{Name: name("subscriptions", "workers")})
	publish(t, c.Publisher("jobs"), &pubsub.Message{Data: []byte("done")}, &pubsub.Message{Data: []byte("todo")})
	got := pullNow(t, c, "workers")
	if len(got) != 2 {
		t.Fatalf("pulled %d, want 2", len(got))
	}
	for _, r := range got {
		if string(r.Message.Data) == "done" {
			if err := c.SubscriptionAdminClient.Acknowledge(context.Background(), &pb.AcknowledgeRequest{Subscription: name("subscriptions", "workers"), AckIds: []string{r.AckId}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.Close()
	stop()
	host, _ = serveDir(t, dir)
	c = client(t, host)
	got = pullNow(t, c, "workers")
	if len(got) != 1 || string(got[0].Message.Data) != "todo" {
		t.Fatalf("after the restart pulled %v, want only todo", got)
	}
}
