package firestore_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestConformance_ReadTimesSurviveARestart checks that reads at a time
// within the last hour are served as production serves them, also when
// that time is before loupe (re)started: documents as they were then, or
// missing when they did not exist yet; only a time beyond the hour is
// "too old".
func TestConformance_ReadTimesSurviveARestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	inst := loupetest.Start(t, loupetest.Options{DataDir: dir})
	c := newClient(t, inst)
	before := time.Now().Add(-time.Second) // before the database's first write
	t1 := writeNotesHistory(t, c)
	inst.Stop(t)

	inst = loupetest.Start(t, loupetest.Options{DataDir: dir})
	c = newClient(t, inst)
	at := firestore.ReadTime(t1)
	if snap, err := c.Doc("notes/one").WithReadOptions(at).Get(ctx); err != nil || snap.Data()["v"] != int64(1) {
		t.Errorf("after a restart, get at the first write: %v; want v 1", err)
	}
	if got := ids(t, c.Collection("notes").WithReadOptions(at).Query); got != "one" {
		t.Errorf("after a restart, query at the first write = %q, want one", got)
	}
	_, err := c.Doc("notes/one").WithReadOptions(firestore.ReadTime(before)).Get(ctx)
	if status.Code(err) != codes.NotFound {
		t.Errorf("get before the first write: %v, want NotFound (the document did not exist)", err)
	}
	if got := ids(t, c.Collection("notes").WithReadOptions(firestore.ReadTime(before)).Query); got != "" {
		t.Errorf("query before the first write = %q, want nothing", got)
	}
	_, err = c.Doc("notes/one").WithReadOptions(firestore.ReadTime(time.Now().Add(-61 * time.Minute))).Get(ctx)
	wantCode(t, err, codes.FailedPrecondition, "The requested snapshot version is too old.")
}

// writeNotesHistory writes notes/one {v: 1}, then {v: 2}, notes/two {v: 9},
// and deletes notes/one; it returns the time of the first write.
func writeNotesHistory(t *testing.T, c *firestore.Client) time.Time {
	t.Helper()
	ctx := context.Background()
	doc := c.Doc("notes/one")
	w1, err := doc.Set(ctx, map[string]any{"v": 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := doc.Set(ctx, map[string]any{"v": 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Doc("notes/two").Set(ctx, map[string]any{"v": 9}); err != nil {
		t.Fatal(err)
	}
	if _, err := doc.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	return w1.UpdateTime
}
