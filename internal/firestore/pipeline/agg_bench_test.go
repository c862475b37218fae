package pipeline

import (
	"context"
	"fmt"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/identity"
)

// BenchmarkExecute_AggregateGroups runs, in process (so that
// -cpuprofile sees the engine), the aggregate of BenchmarkServe_Pipeline:
// count and average of n grouped by cat over 100,000 documents.
func BenchmarkExecute_AggregateGroups(b *testing.B) {
	eng, err := firestore.Open(firestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	eng.SetEditions(map[string]firestore.Edition{"": firestore.EditionEnterprise})
	ctx := context.Background()
	const n, per = 100_000, 500
	for i := 0; i < n; i += per {
		var writes []*pb.Write
		for j := i; j < i+per; j++ {
			writes = append(writes, &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{
				Name: fmt.Sprintf("%s/documents/items/%06d", fuzzDB, j),
				Fields: map[string]*pb.Value{"group": intV(int64(j % 10)), "n": intV(int64(j)),
					"cat": stringV(fmt.Sprintf("c%02d", j%20)), "pad": stringV("0123456789abcdef0123456789abcdef")},
			}}})
		}
		if _, err := eng.Commit(ctx, identity.Owner, fuzzDB, writes, nil); err != nil {
			b.Fatal(err)
		}
	}
	sp := &pb.StructuredPipeline{Pipeline: &pb.Pipeline{Stages: []*pb.Pipeline_Stage{
		pstage("collection", refV("/items")),
		pstage("aggregate", mapV(map[string]*pb.Value{"n": fn("count"), "avg": fn("average", fieldRef("n"))}),
			mapV(map[string]*pb.Value{"cat": fieldRef("cat")})),
	}}}
	b.ResetTimer()
	for range b.N {
		res, err := Execute(ctx, eng, identity.Owner, Request{Database: fuzzDB, Pipeline: sp})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Docs) != 20 {
			b.Fatalf("got %d groups, want 20", len(res.Docs))
		}
	}
}
