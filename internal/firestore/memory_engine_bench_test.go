package firestore

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/identity"
)

// SmallDocWrites returns the writes of documents start..start+n-1 of the
// memory load into database: four fields, a string, an integer, a double and
// a boolean (exported for the benchmarks through loupe serve).
func SmallDocWrites(database string, start, n int) []*pb.Write {
	writes := make([]*pb.Write, 0, n)
	for i := start; i < start+n; i++ {
		writes = append(writes, &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{
			Name: fmt.Sprintf("%s/documents/small/d%05d", database, i),
			Fields: map[string]*pb.Value{
				"title": {ValueType: &pb.Value_StringValue{StringValue: fmt.Sprintf("item %d", i)}},
				"n":     {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i)}},
				"price": {ValueType: &pb.Value_DoubleValue{DoubleValue: float64(i) / 7}},
				"done":  {ValueType: &pb.Value_BooleanValue{BooleanValue: i%2 == 0}},
			},
		}}})
	}
	return writes
}

// BenchmarkEngine_MemoryPerDocument commits 20,000 small documents in
// batches of 500 to an in-memory engine and reports the live heap they hold
// per document right after the load (history of past read times included).
func BenchmarkEngine_MemoryPerDocument(b *testing.B) {
	const docs, batch = 20_000, 500
	var before, after runtime.MemStats
	for range b.N {
		e, _ := Open(Options{})
		runtime.GC()
		runtime.ReadMemStats(&before)
		for start := 0; start < docs; start += batch {
			if _, err := e.Commit(context.Background(), identity.Owner, benchDB, SmallDocWrites(benchDB, start, batch), nil); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.StopTimer()
		e.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/docs, "heap-bytes/doc")
}
