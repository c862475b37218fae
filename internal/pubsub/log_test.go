package pubsub

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/loupe-dev/loupe/internal/wal"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// openDir opens an engine on dir, closed when the test ends.
func openDir(t *testing.T, dir string) *Engine {
	t.Helper()
	e, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// backlog pulls every deliverable message of a subscription, in order.
func backlog(t *testing.T, e *Engine, sub string) []*pb.PubsubMessage {
	t.Helper()
	got, err := e.Pull(context.Background(), sub, 1000, time.Minute, false)
	if err != nil {
		t.Fatalf("pull %s: %v", sub, err)
	}
	var out []*pb.PubsubMessage
	for _, r := range got {
		out = append(out, r.Message)
	}
	return out
}

func equal(a, b *pb.PubsubMessage) bool { return proto.Equal(a, b) }

// logPayloads is what the log in dir holds, one payload a record.
func logPayloads(t *testing.T, dir string) [][]byte {
	t.Helper()
	var out [][]byte
	if _, err := wal.Replay(filepath.Join(dir, logName), false, func(p []byte) error {
		out = append(out, bytes.Clone(p))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpen_ReadsAJSONLogFromEarlierVersions: a data folder whose log holds
// publishes as JSON (testdata/json-log, written by loupe before publishes
// were binary: topics, subscriptions, a deleted subscription, publishes
// with attributes, an ordering key, bytes JSON escapes, and an ack) opens
// with every topic, subscription and unacked message, and still does once
// opening has rewritten it with binary publishes.
func TestOpen_ReadsAJSONLogFromEarlierVersions(t *testing.T) {
	dir := t.TempDir()
	old, err := os.ReadFile(filepath.Join("testdata", "json-log", logName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, logName), old, 0o644); err != nil {
		t.Fatal(err)
	}
	const p = "projects/demo-old/"
	at := func(s int) *timestamppb.Timestamp {
		return timestamppb.New(time.Date(2026, 11, 29, 12, 0, s, 123456789, time.UTC))
	}
	first := &pb.PubsubMessage{Data: []byte("first"), Attributes: map[string]string{"kind": "order"}, MessageId: "1", PublishTime: at(0)}
	second := &pb.PubsubMessage{Data: []byte("line\nbreak \\ \"quoted\" é"), OrderingKey: "user-1", MessageId: "2", PublishTime: at(1)}
	third := &pb.PubsubMessage{Data: []byte{0, '\n', '\\', 0xff}, MessageId: "3", PublishTime: at(1)}
	fourth := &pb.PubsubMessage{Attributes: map[string]string{"only": "attributes"}, MessageId: "4", PublishTime: at(1)}
	want := map[string][]*pb.PubsubMessage{
		p + "subscriptions/billing":    {first, second, third},
		p + "subscriptions/audit":      {second, third},
		p + "subscriptions/all-events": {fourth},
	}
	for round := range 2 {
		e := openDir(t, dir)
		if topic, err := e.GetTopic(p + "topics/orders"); err != nil || topic.Labels["team"] != "shop" {
			t.Fatalf("round %d: topic orders: %v, %v", round, topic, err)
		}
		if _, err := e.GetTopic(p + "topics/events"); err != nil {
			t.Fatalf("round %d: topic events: %v", round, err)
		}
		billing, err := e.GetSubscription(p + "subscriptions/billing")
		if err != nil || billing.AckDeadlineSeconds != 30 || !billing.EnableMessageOrdering ||
			!proto.Equal(billing.RetryPolicy, &pb.RetryPolicy{MinimumBackoff: durationpb.New(5 * time.Second)}) {
			t.Fatalf("round %d: subscription billing: %v, %v", round, billing, err)
		}
		if _, err := e.GetSubscription(p + "subscriptions/gone"); err == nil {
			t.Errorf("round %d: the deleted subscription is back", round)
		}
		for sub, msgs := range want {
			if got := backlog(t, e, sub); !slices.EqualFunc(msgs, got, equal) {
				t.Errorf("round %d: %s's messages are\n%v\nwant\n%v", round, sub, got, msgs)
			}
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	publishes := 0
	for _, payload := range logPayloads(t, dir) {
		if payload[0] == publishMark {
			publishes++
		}
	}
	if publishes != 4 {
		t.Errorf("the rewritten log holds %d binary publishes, want one a message (4)", publishes)
	}
}

// TestLog_PublishesKeepEveryByte: messages whose data, attributes and
// ordering key hold every byte, newlines and backslashes among them, come
// back the same after a restart, with their ids and publish times, and the
// log holds one record a line.
func TestLog_PublishesKeepEveryByte(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	const topic, sub = "projects/demo-bytes/topics/raw", "projects/demo-bytes/subscriptions/raw"
	if _, err := e.CreateTopic(&pb.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateSubscription(&pb.Subscription{Name: sub, Topic: topic}); err != nil {
		t.Fatal(err)
	}
	every := make([]byte, 0, 256)
	for b := range 256 {
		every = append(every, byte(b))
	}
	var published []*pb.PubsubMessage
	for _, batch := range [][]*pb.PubsubMessage{
		{{Data: every}, {Data: []byte("\\n\n\\\\\n\n")}},
		{{Data: []byte("\\"), Attributes: map[string]string{"a\nb": "c\\nd"}, OrderingKey: "k\\\n"}},
		{{Data: bytes.Repeat([]byte("\n\\"), 40000)}},
	} {
		if _, err := e.Publish(topic, batch); err != nil {
			t.Fatal(err)
		}
		for _, m := range batch {
			published = append(published, proto.Clone(m).(*pb.PubsubMessage))
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(logPayloads(t, dir)); n != 5 {
		t.Errorf("the log holds %d records, want 5 (a topic, a subscription, 3 publishes)", n)
	}
	e = openDir(t, dir)
	if got := backlog(t, e, sub); !slices.EqualFunc(published, got, equal) {
		t.Errorf("messages after a restart are\n%v\nwant\n%v", got, published)
	}
}

// TestUnescape_RefusesBadEscapes: a publish record's escapes are `\n` and
// `\\` only; anything else is damage, not data.
func TestUnescape_RefusesBadEscapes(t *testing.T) {
	for _, bad := range []string{`\`, `ab\`, `\x`, `a\tb`} {
		if _, err := unescape([]byte(bad)); err == nil {
			t.Errorf("unescape(%q) was accepted", bad)
		}
	}
	for _, good := range []string{"", "plain", "\n", "\\", "\n\\n\\\\\n", "x\ny\\z"} {
		escaped := escape(nil, []byte(good))
		if slices.Contains(escaped, '\n') {
			t.Errorf("escape(%q) = %q holds a newline", good, escaped)
		}
		if back, err := unescape(escaped); err != nil || string(back) != good {
			t.Errorf("unescape(escape(%q)) = %q, %v", good, back, err)
		}
	}
}
