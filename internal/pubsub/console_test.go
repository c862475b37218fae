package pubsub

import (
	"context"
	"fmt"
	"testing"
	"time"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
)

// TestOverview_BacklogsAndRecentMessages: the console's view of a project
// counts each subscription's unacknowledged messages (and those leased),
// keeps a topic's last 20 messages newest first, and leaves other projects
// out.
func TestOverview_BacklogsAndRecentMessages(t *testing.T) {
	e, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const topic = "projects/demo-loupe/topics/orders"
	if _, err := e.CreateTopic(&pb.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateTopic(&pb.Topic{Name: "projects/other/topics/orders"}); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"billing", "audit"} {
		if _, err := e.CreateSubscription(&pb.Subscription{Name: "projects/demo-loupe/subscriptions/" + sub, Topic: topic}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 25 {
		if _, err := e.Publish(topic, []*pb.PubsubMessage{{Data: fmt.Appendf(nil, "m%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.Pull(context.Background(), "projects/demo-loupe/subscriptions/billing", 5, time.Minute, false)
	if err != nil || len(got) != 5 {
		t.Fatalf("pull: %d, %v", len(got), err)
	}
	if err := e.Acknowledge("projects/demo-loupe/subscriptions/billing", []string{got[0].AckID, got[1].AckID}); err != nil {
		t.Fatal(err)
	}
	view := e.Overview("demo-loupe")
	if len(view) != 1 || view[0].Name != topic {
		t.Fatalf("topics: %+v", view)
	}
	subs := view[0].Subscriptions
	if len(subs) != 2 || subs[0].Name != "projects/demo-loupe/subscriptions/audit" || subs[0].Backlog != 25 || subs[0].Leased != 0 ||
		subs[1].Backlog != 23 || subs[1].Leased != 3 || subs[1].OldestUnack == nil {
		t.Fatalf("subscriptions: %+v", subs)
	}
	recent := view[0].Recent
	if len(recent) != 20 || recent[0]["data"] != "bTI0" || recent[19]["data"] != "bTU=" {
		t.Fatalf("recent: %d, first %v, last %v", len(recent), recent[0]["data"], recent[len(recent)-1]["data"])
	}
}

// TestChanges_MoveWithWhatTheConsoleShows: the console's long poll wakes
// on every change its view shows (a topic, a subscription, a publish, a
// pull's lease, an ack, a lease running out, a deletion) and not on reads.
func TestChanges_MoveWithWhatTheConsoleShows(t *testing.T) {
	e, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const topic, sub = "projects/demo-loupe/topics/orders", "projects/demo-loupe/subscriptions/billing"
	c := e.Changes()
	moves := func(what string, do func() error) {
		t.Helper()
		v := c.Version()
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if c.Version() == v {
			t.Errorf("%s: the change counter stayed at %d", what, v)
		}
	}
	moves("create a topic", func() error { _, err := e.CreateTopic(&pb.Topic{Name: topic}); return err })
	moves("create a subscription", func() error {
		_, err := e.CreateSubscription(&pb.Subscription{Name: sub, Topic: topic})
		return err
	})
	moves("publish", func() error { _, err := e.Publish(topic, []*pb.PubsubMessage{{Data: []byte("a")}}); return err })
	var got []Received
	moves("pull", func() (err error) { got, err = e.Pull(context.Background(), sub, 1, time.Minute, false); return err })
	moves("ack", func() error { return e.Acknowledge(sub, []string{got[0].AckID}) })

	v := c.Version()
	e.Overview("demo-loupe")
	if _, err := e.GetSubscription(sub); err != nil {
		t.Fatal(err)
	}
	if none, err := e.Pull(context.Background(), sub, 1, 0, false); err != nil || len(none) != 0 {
		t.Fatalf("pull of an empty subscription: %v, %v", none, err)
	}
	if c.Version() != v {
		t.Errorf("reads moved the change counter from %d to %d", v, c.Version())
	}

	// A lease that runs out changes the leased count with no request: the
	// counter moves then.
	if _, err := e.Publish(topic, []*pb.PubsubMessage{{Data: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	if got, err = e.Pull(context.Background(), sub, 1, 20*time.Millisecond, false); err != nil || len(got) != 1 {
		t.Fatalf("pull: %v, %v", got, err)
	}
	v = c.Version()
	if c.Wait(context.Background(), v) == v {
		t.Fatal("the lease ran out, and the change counter did not move")
	}
	if s := e.Overview("demo-loupe")[0].Subscriptions[0]; s.Leased != 0 || s.Backlog != 1 {
		t.Errorf("after the lease ran out: %+v", s)
	}
	moves("delete the subscription", func() error { return e.DeleteSubscription(sub) })
	moves("delete the topic", func() error { return e.DeleteTopic(topic) })
}
