package firestore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// randomVector returns dims numbers drawn from r.
func randomVector(r *rand.Rand, dims int) []float64 {
	v := make([]float64, dims)
	for i := range v {
		v[i] = r.Float64()*2 - 1
	}
	return v
}

// findNearestQuery is a limit-10 euclidean search of field "e" in "items".
func findNearestQuery(vec []float64) *pb.StructuredQuery {
	elems := make([]*pb.Value, len(vec))
	for i, x := range vec {
		elems[i] = doubleValue(x)
	}
	return &pb.StructuredQuery{
		From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "items"}},
		FindNearest: &pb.StructuredQuery_FindNearest{
			VectorField:     &pb.StructuredQuery_FieldReference{FieldPath: "e"},
			QueryVector:     vectorOf(elems),
			DistanceMeasure: pb.StructuredQuery_FindNearest_EUCLIDEAN,
			Limit:           wrapperspb.Int32(10),
		},
	}
}

// reportP50 runs f b.N times and reports the median duration.
func reportP50(b *testing.B, f func()) {
	b.Helper()
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		f()
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
}

// BenchmarkFindNearest_100kx768 searches a vector index of 100,000
// 768-dimension vectors for the 10 nearest by euclidean distance: the exact
// (brute-force) scan an unfiltered FindNearest makes, without reading the
// 10 documents it returns. (The documents themselves would take about 5 GiB
// decoded, so the index is filled directly.)
func BenchmarkFindNearest_100kx768(b *testing.B) {
	const n, dims = 100_000, 768
	r := rand.New(rand.NewPCG(1, 2))
	vi := &vectorIndex{key: vectorKey{group: "items", field: "e"}, path: FieldPath{"e"}, vecs: make(map[string][]float64, n)}
	for i := range n {
		vi.vecs[fmt.Sprintf("items/d%06d", i)] = randomVector(r, dims)
	}
	p, err := planQuery(benchDB+"/documents", findNearestQuery(randomVector(r, dims)))
	if err != nil {
		b.Fatal(err)
	}
	w := newWindow(p, 0)
	reportP50(b, func() {
		top := p.nearest.top()
		vi.search(top, w.inScope)
		if len(top.hits) != 10 {
			b.Fatal(len(top.hits))
		}
	})
}

// BenchmarkEngine_FindNearest10kx768 runs an unfiltered limit-10 FindNearest
// over 10,000 documents with 768-dimension vectors through RunQuery, once
// the vector index is built.
func BenchmarkEngine_FindNearest10kx768(b *testing.B) {
	const n, dims = 10_000, 768
	e, _ := Open(Options{})
	defer e.Close()
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < n; i += MaxWritesPerCommit {
		var writes []*pb.Write
		for j := i; j < min(n, i+MaxWritesPerCommit); j++ {
			vec := randomVector(r, dims)
			elems := make([]*pb.Value, dims)
			for k, x := range vec {
				elems[k] = doubleValue(x)
			}
			writes = append(writes, &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{
				Name:   fmt.Sprintf("%s/documents/items/d%06d", benchDB, j),
				Fields: map[string]*pb.Value{"e": vectorOf(elems), "n": intValue(int64(j))},
			}}})
		}
		if _, err := e.Commit(context.Background(), identity.Owner, benchDB, writes, nil); err != nil {
			b.Fatal(err)
		}
	}
	q := findNearestQuery(randomVector(r, dims))
	run := func() {
		docs, _, err := e.RunQuery(context.Background(), identity.Owner, benchDB+"/documents", q, Consistency{})
		if err != nil || len(docs) != 10 {
			b.Fatal(len(docs), err)
		}
	}
	run() // builds the vector index
	reportP50(b, run)
}
