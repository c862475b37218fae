package pipeline_test

import (
	"context"
	"fmt"
	"testing"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

const benchDocs = 100_000

// BenchmarkServe_Pipeline compares, over 100,000 documents in an
// Enterprise database through the Go SDK: group == 7, n descending,
// limit 20 as a classic query, as its Query.Pipeline() conversion, and
// as a pipeline written by hand (whose sort must keep documents without
// n, so only its where runs on an index); then an aggregate of count and
// average grouped by one of 20 categories.
func BenchmarkServe_Pipeline(b *testing.B) {
	ctx := context.Background()
	_, ent, _ := startInstance(b)
	w := ent.BulkWriter(ctx)
	for i := range benchDocs {
		if _, err := w.Set(ent.Doc(fmt.Sprintf("items/%06d", i)), map[string]any{"group": i % 10, "n": i, "cat": fmt.Sprintf("c%02d", i%20), "pad": "0123456789abcdef0123456789abcdef"}); err != nil {
			b.Fatal(err)
		}
	}
	w.End()
	q := ent.Collection("items").Where("group", "==", 7).OrderBy("n", firestore.Desc).Limit(20)
	handWritten := ent.Pipeline().Collection("items").Where(firestore.Equal("group", 7)).
		Sort(firestore.Orders(firestore.Descending(firestore.FieldOf("n")))).Limit(20)
	want := func(n int, got int, err error) error {
		if err == nil && got != n {
			err = fmt.Errorf("got %d results, want %d", got, n)
		}
		return err
	}
	b.Run("classic", func(b *testing.B) {
		loupetest.Timed(b, func() error {
			docs, err := q.Documents(ctx).GetAll()
			return want(20, len(docs), err)
		})
	})
	for name, p := range map[string]*firestore.Pipeline{"query-pipeline": q.Pipeline(), "pipeline": handWritten} {
		b.Run(name, func(b *testing.B) {
			loupetest.Timed(b, func() error {
				res, err := p.Execute(ctx).Results().GetAll()
				return want(20, len(res), err)
			})
		})
	}
	b.Run("aggregate-groups", func(b *testing.B) {
		p := ent.Pipeline().Collection("items").Aggregate(
			firestore.Accumulators(firestore.CountAll().As("n"), firestore.Average("n").As("avg")),
			firestore.WithAggregateGroups("cat"))
		loupetest.Timed(b, func() error {
			res, err := p.Execute(ctx).Results().GetAll()
			return want(20, len(res), err)
		})
	})
}
