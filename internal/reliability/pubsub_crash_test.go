package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// psLedger records every publish loupe acknowledged: message id → data.
type psLedger struct {
	mu    sync.Mutex
	data  map[string]string
	round int // acknowledgements since busy last answered true
}

func (led *psLedger) busy() bool {
	led.mu.Lock()
	defer led.mu.Unlock()
	ok := led.round > 0
	led.round = 0
	return ok
}

// publishWorker publishes batches of 20 messages through the client's
// batching publisher until ctx ends, each result awaited, and records the
// acknowledged ones. Their data holds newlines and backslashes, and every
// fourth is 1 KiB.
func (led *psLedger) publishWorker(ctx context.Context, p *pubsub.Publisher, round, w int) {
	for i := 0; ctx.Err() == nil; i++ {
		sent := make(map[*pubsub.PublishResult]string, 20)
		for j := range 20 {
			data := fmt.Sprintf("r%d-w%d-%d-%d\n\\", round, w, i, j)
			if j%4 == 0 {
				data += strings.Repeat("m", 1024)
			}
			sent[p.Publish(ctx, &pubsub.Message{Data: []byte(data)})] = data
		}
		for r, data := range sent {
			if id, err := r.Get(ctx); err == nil {
				led.mu.Lock()
				led.data[id] = data
				led.round++
				led.mu.Unlock()
			}
		}
	}
}

// verify pulls the subscription's whole backlog (after a restart no
// message is leased) and checks that every acknowledged message is in it,
// with its data.
func (led *psLedger) verify(t *testing.T, c *pubsub.Client, sub string) {
	t.Helper()
	ctx := context.Background()
	got := map[string]string{}
	for {
		//lint:ignore SA1019 return_immediately is deprecated, but it is how one pull reads what is there now.
		resp, err := c.SubscriptionAdminClient.Pull(ctx, &pb.PullRequest{Subscription: sub, MaxMessages: 1000, ReturnImmediately: true})
		if err != nil {
			t.Fatalf("pull: %v", err)
		}
		if len(resp.ReceivedMessages) == 0 {
			break
		}
		for _, m := range resp.ReceivedMessages {
			got[m.Message.MessageId] = string(m.Message.Data)
		}
	}
	led.mu.Lock()
	defer led.mu.Unlock()
	var missing []string
	for id, data := range led.data {
		if g, ok := got[id]; !ok {
			missing = append(missing, id)
		} else if g != data {
			t.Errorf("message %s holds %q, acknowledged with %q", id, g, data)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Errorf("%d of %d acknowledged messages are missing, among them %v", len(missing), len(led.data), missing[:min(len(missing), 5)])
	}
}

// pubsubClient is a Go Pub/Sub client of inst.
func pubsubClient(t *testing.T, inst *loupetest.Instance) *pubsub.Client {
	t.Helper()
	t.Setenv("PUBSUB_EMULATOR_HOST", inst.Host)
	c, err := pubsub.NewClient(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCrash_PubSubKillUnderPublish kills loupe with SIGKILL at random
// moments while four goroutines publish through the Go client's batching
// publisher, several times on one data dir, and checks after every restart
// that every message whose publish was acknowledged is in the
// subscription's backlog with its data. -long runs 10 rounds instead of 3.
func TestCrash_PubSubKillUnderPublish(t *testing.T) {
	rounds, workers := 3, 4
	if *long {
		rounds = 10
	}
	const topic, sub = "projects/" + project + "/topics/crash", "projects/" + project + "/subscriptions/crash"
	dir := t.TempDir()
	led := &psLedger{data: map[string]string{}}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	for round := range rounds {
		inst := loupetest.Start(t, loupetest.Options{Process: true, DataDir: dir})
		c := pubsubClient(t, inst)
		if round == 0 {
			if _, err := c.TopicAdminClient.CreateTopic(context.Background(), &pb.Topic{Name: topic}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.SubscriptionAdminClient.CreateSubscription(context.Background(), &pb.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: 600}); err != nil {
				t.Fatal(err)
			}
		}
		led.verify(t, c, sub)
		if t.Failed() {
			c.Close()
			t.Fatalf("round %d: the data dir lost acknowledged publishes", round)
		}
		ctx, cancel := context.WithCancel(context.Background())
		p := c.Publisher(topic)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() { led.publishWorker(ctx, p, round, w) })
		}
		waitForWork(t, fmt.Sprintf("round %d: an acknowledged publish", round), led.busy)
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		inst.Kill()
		cancel()
		wg.Wait()
		c.Close()
		led.mu.Lock()
		t.Logf("round %d killed; %d publishes acknowledged so far", round, len(led.data))
		led.mu.Unlock()
	}
	inst := loupetest.Start(t, loupetest.Options{DataDir: dir})
	c := pubsubClient(t, inst)
	defer c.Close()
	led.verify(t, c, sub)
}
