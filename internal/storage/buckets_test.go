package storage_test

import (
	"context"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/api/iterator"
)

// TestBucketsList: the Go client's Buckets iterator lists every bucket that
// holds an object or was created, as GCS's buckets.list answers.
func TestBucketsList(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	c := client(t, inst)
	ctx := context.Background()
	write(t, c, "clips/a.mp4", []byte("a"), 0)
	if err := c.Bucket("other-bucket").Create(ctx, "demo-loupe", nil); err != nil {
		t.Fatal(err)
	}
	var names []string
	it := c.Buckets(ctx, "demo-loupe")
	for {
		b, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, b.Name)
	}
	if len(names) != 2 || names[0] != bucket || names[1] != "other-bucket" {
		t.Errorf("buckets = %v, want [%s other-bucket]", names, bucket)
	}
}
