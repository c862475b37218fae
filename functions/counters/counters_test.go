package counters_test

import (
	"context"
	"testing"

	"github.com/loupe-dev/loupe/functions/counters"
	"github.com/loupe-dev/loupe/functions/internal/loupetest"
)

// TestHandle_CountsRepliesOnce: a reply created raises its parent's
// repliesCount, the same event delivered again changes nothing, a soft
// delete lowers it, and a count never goes below zero; a top-level comment
// counts nothing.
func TestHandle_CountsRepliesOnce(t *testing.T) {
	ctx := context.Background()
	l := loupetest.Start(t)
	h := &counters.Handler{DB: l.Firestore}
	comments := "feedbackRequests/r1/comments/"
	parent := l.Firestore.Doc(comments + "c1")
	if _, err := parent.Set(ctx, map[string]any{"content": "Great tone", "isReply": false, "deleted": false, "repliesCount": 0}); err != nil {
		t.Fatal(err)
	}
	reply := map[string]any{"content": "Thanks!", "isReply": true, "parentCommentId": "c1", "deleted": false}
	deleted := map[string]any{"content": "Thanks!", "isReply": true, "parentCommentId": "c1", "deleted": true}
	count := func() int64 {
		t.Helper()
		snap, err := parent.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := snap.DataAt("repliesCount")
		c, _ := n.(int64)
		return c
	}
	for _, step := range []struct {
		what, id, doc string
		before, after map[string]any
		want          int64
	}{
		{"a reply", "e1", "c2", nil, reply, 1},
		{"the same event again", "e1", "c2", nil, reply, 1},
		{"a second reply", "e2", "c3", nil, reply, 2},
		{"a top-level comment", "e3", "c4", nil, map[string]any{"content": "More", "isReply": false, "deleted": false}, 2},
		{"a reply soft-deleted", "e4", "c2", reply, deleted, 1},
		{"the other soft-deleted", "e5", "c3", reply, deleted, 0},
		{"a soft delete the count never saw", "e6", "c5", reply, deleted, 0},
	} {
		if err := h.Handle(ctx, loupetest.Event(step.id, comments+step.doc, step.before, step.after)); err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		if got := count(); got != step.want {
			t.Errorf("after %s: repliesCount = %d, want %d", step.what, got, step.want)
		}
	}
}
