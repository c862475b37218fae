package firestore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

const benchDB = "projects/bench/databases/(default)"

func benchDoc(i int) *pb.Write {
	return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{
		Name:   fmt.Sprintf("%s/documents/items/d%07d", benchDB, i),
		Fields: map[string]*pb.Value{"n": intValue(int64(i)), "group": intValue(int64(i % 100)), "title": str(fmt.Sprint("item ", i))},
	}}}
}

func seedEngine(b *testing.B, e *Engine, n int) {
	b.Helper()
	for i := 0; i < n; i += MaxWritesPerCommit {
		var writes []*pb.Write
		for j := i; j < min(n, i+MaxWritesPerCommit); j++ {
			writes = append(writes, benchDoc(j))
		}
		if _, err := e.Commit(context.Background(), identity.Owner, benchDB, writes, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEngine_Get reads one document by name.
func BenchmarkEngine_Get(b *testing.B) {
	e, _ := Open(Options{})
	defer e.Close()
	seedEngine(b, e, 1000)
	name := benchDB + "/documents/items/d0000500"
	b.ResetTimer()
	for range b.N {
		if _, err := e.Get(context.Background(), identity.Owner, name); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEngine_CommitDurable commits one document per call with fsync, from 64 goroutines.
func BenchmarkEngine_CommitDurable(b *testing.B) {
	e, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	b.SetParallelism(32) // 2 cores × 32 = 64 writers
	var next atomic.Int64
	b.RunParallel(func(p *testing.PB) {
		for p.Next() {
			i := int(next.Add(1))
			if _, err := e.Commit(context.Background(), identity.Owner, benchDB, []*pb.Write{benchDoc(i)}, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// group7Query is group == 7 ordered by n descending, limit 20, over "items".
func group7Query() *pb.StructuredQuery {
	return &pb.StructuredQuery{
		From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "items"}},
		Where: &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
			Field: &pb.StructuredQuery_FieldReference{FieldPath: "group"}, Op: pb.StructuredQuery_FieldFilter_EQUAL, Value: intValue(7),
		}}},
		OrderBy: []*pb.StructuredQuery_Order{{Field: &pb.StructuredQuery_FieldReference{FieldPath: "n"}, Direction: pb.StructuredQuery_DESCENDING}},
		Limit:   wrapperspb.Int32(20),
	}
}

// BenchmarkEngine_QueryLimit20 runs a filtered, ordered, limit-20 query over
// 100,000 documents, in process, once the indexes are built.
func BenchmarkEngine_QueryLimit20(b *testing.B) {
	e, _ := Open(Options{})
	defer e.Close()
	seedEngine(b, e, 100_000)
	q := group7Query()
	run := func() {
		docs, _, err := e.RunQuery(context.Background(), identity.Owner, benchDB+"/documents", q, Consistency{})
		if err != nil || len(docs) != 20 {
			b.Fatal(len(docs), err)
		}
	}
	run() // builds the indexes
	b.ResetTimer()
	for range b.N {
		run()
	}
}
