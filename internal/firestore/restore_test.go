package firestore

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestEngine_RestoreKeepsTheDocumentsTimes: restored documents read back
// with the times they came with, over a restart too; restoring them again
// changes nothing; a subscriber sees them as a commit; a bad document fails
// the call before anything changes.
func TestEngine_RestoreKeepsTheDocumentsTimes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2021, 3, 4, 5, 6, 7, 123456000, time.UTC)
	updated := created.Add(48 * time.Hour)
	doc := func(path string, n int64) *pb.Document {
		return &pb.Document{Name: ixDB + "/documents/" + path, Fields: map[string]*pb.Value{"n": intValue(n)},
			CreateTime: timestamppb.New(created), UpdateTime: timestamppb.New(updated)}
	}
	// Subscribers hear of commits from the pipeline's goroutine, after the
	// call returns: what they saw is read once Close has drained it.
	var mu sync.Mutex
	var seen []Commit
	e.Subscribe(func(c Commit) { mu.Lock(); seen = append(seen, c); mu.Unlock() })
	docs := []*pb.Document{doc("posts/a", 1), doc("posts/a/comments/c", 2)}
	if n, err := e.Restore(ctx, ixDB, docs); err != nil || n != 2 {
		t.Fatalf("restore: %d %v, want 2 changed", n, err)
	}
	if n, err := e.Restore(ctx, ixDB, docs); err != nil || n != 0 {
		t.Errorf("restoring again: %d %v, want nothing changed", n, err)
	}
	for _, bad := range []struct {
		name string
		doc  *pb.Document
		want string
	}{
		{"another database", &pb.Document{Name: "projects/p/databases/other/documents/posts/b", CreateTime: timestamppb.New(created), UpdateTime: timestamppb.New(updated)}, "is not in database"},
		{"no times", &pb.Document{Name: ixDB + "/documents/posts/b"}, "needs a valid createTime and updateTime"},
		{"updated before created", &pb.Document{Name: ixDB + "/documents/posts/b", CreateTime: timestamppb.New(updated), UpdateTime: timestamppb.New(created)}, "updated before it was created"},
		{"a collection's name", &pb.Document{Name: ixDB + "/documents/posts", CreateTime: timestamppb.New(created), UpdateTime: timestamppb.New(updated)}, ""},
	} {
		_, err := e.Restore(ctx, ixDB, []*pb.Document{doc("posts/ok", 3), bad.doc})
		if errs.KindOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT %q", bad.name, err, bad.want)
		}
	}
	if got, _ := e.Get(ctx, identity.Owner, ixDB+"/documents/posts/ok"); got != nil {
		t.Errorf("a failed restore wrote %v", got)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(seen) != 1 || len(seen[0].Changes) != 2 {
		t.Errorf("subscriber saw %d commits, want one of the 2 documents", len(seen))
	}
	mu.Unlock()
	e, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, want := range docs {
		got, err := e.Get(ctx, identity.Owner, want.Name)
		if err != nil || !proto.Equal(got, want) {
			t.Errorf("after a restart %s reads %v %v, want %v", want.Name, got, err, want)
		}
	}
}
