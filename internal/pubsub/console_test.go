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
