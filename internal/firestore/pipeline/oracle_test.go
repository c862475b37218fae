package pipeline_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"
)

// TestOracle_QueryPipeline: a classic query and its Query.Pipeline()
// conversion return the same documents in the same order, over generated
// queries (filters, orders, cursors, offsets, limits, limitToLast), and
// an AggregationQuery and its Pipeline() the same count, or sum and
// average.
func TestOracle_QueryPipeline(t *testing.T) {
	ent, _ := start(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(34, 1))
	colors := []string{"red", "green", "blue"}
	w := ent.BulkWriter(ctx)
	for i := range 60 {
		d := map[string]any{"n": rng.IntN(10), "c": colors[rng.IntN(3)], "tags": []string{colors[rng.IntN(3)], colors[rng.IntN(3)]}, "m": map[string]any{"x": rng.IntN(4)}}
		switch rng.IntN(5) { // a: mixed types, sometimes absent
		case 0:
			d["a"] = rng.IntN(5)
		case 1:
			d["a"] = float64(rng.IntN(5)) + 0.5
		case 2:
			d["a"] = colors[rng.IntN(3)]
		case 3:
			d["a"] = nil
		}
		if rng.IntN(6) == 0 {
			delete(d, "n")
		}
		if _, err := w.Set(ent.Doc(fmt.Sprintf("o/d%02d", i)), d); err != nil {
			t.Fatal(err)
		}
	}
	w.End()
	coll := ent.Collection("o")
	filters := []func() (string, string, any){
		func() (string, string, any) {
			return "n", []string{"==", "<", "<=", ">", ">="}[rng.IntN(5)], rng.IntN(10)
		},
		func() (string, string, any) {
			return "a", []string{"==", "<", ">="}[rng.IntN(3)], []any{2, 1.5, "green", nil}[rng.IntN(4)]
		},
		func() (string, string, any) { return "c", "in", []string{colors[rng.IntN(3)], colors[rng.IntN(3)]} },
		func() (string, string, any) { return "tags", "array-contains", colors[rng.IntN(3)] },
		func() (string, string, any) { return "tags", "array-contains-any", []string{colors[rng.IntN(3)]} },
		func() (string, string, any) { return "m.x", ">", rng.IntN(3) },
	}
	compared, nonEmpty := 0, 0
	for i := range 120 {
		q := coll.Query
		var desc []string
		for range rng.IntN(3) {
			f, op, v := filters[rng.IntN(len(filters))]()
			if op != "==" && op != "in" && op != "array-contains" && op != "array-contains-any" && v == nil {
				op = "=="
			}
			q = q.Where(f, op, v)
			desc = append(desc, fmt.Sprintf("%s %s %v", f, op, v))
		}
		ordered := rng.IntN(3) > 0
		if ordered {
			dir := []firestore.Direction{firestore.Asc, firestore.Desc}[rng.IntN(2)]
			q = q.OrderBy("n", dir)
			desc = append(desc, fmt.Sprintf("orderBy n %v", dir))
			if rng.IntN(2) == 0 {
				q = q.OrderBy(firestore.DocumentID, dir)
			}
			switch rng.IntN(4) {
			case 0:
				q = q.StartAfter(rng.IntN(10))
				desc = append(desc, "startAfter")
			case 1:
				q = q.EndAt(rng.IntN(10))
				desc = append(desc, "endAt")
			}
		}
		if rng.IntN(3) == 0 {
			q = q.Offset(rng.IntN(4))
			desc = append(desc, "offset")
		}
		if n := rng.IntN(8); n > 0 {
			if ordered && rng.IntN(3) == 0 {
				q = q.LimitToLast(n)
			} else {
				q = q.Limit(n)
			}
			desc = append(desc, fmt.Sprintf("limit %d", n))
		}
		classic, err := names(q.Documents(ctx))
		if err != nil {
			continue // a query the classic API refuses has no pipeline to compare
		}
		res, err := q.Pipeline().Execute(ctx).Results().GetAll()
		if err != nil {
			t.Errorf("query %d (%s): pipeline: %v", i, strings.Join(desc, ", "), err)
			continue
		}
		var piped []string
		for _, r := range res {
			piped = append(piped, r.Ref().ID)
		}
		compared++
		if len(classic) > 0 {
			nonEmpty++
		}
		if !slices.Equal(classic, piped) && !(!ordered && sameSet(classic, piped)) {
			t.Errorf("query %d (%s): classic %v, pipeline %v", i, strings.Join(desc, ", "), classic, piped)
		}
	}
	if compared < 70 || nonEmpty < 50 {
		t.Errorf("compared %d queries, %d with results: the generator makes too few", compared, nonEmpty)
	}
	for i := range 20 {
		f, op, v := filters[rng.IntN(len(filters))]()
		if v == nil {
			op = "=="
		}
		fq := coll.Where(f, op, v)
		// Count apart: a classic aggregation counts only the documents that
		// have every field its other aggregations name, which the SDK's
		// conversion (count(__name__)) does not say.
		aq := fq.NewAggregationQuery().WithCount("count")
		keys := []string{"count"}
		if i%2 == 1 {
			aq, keys = fq.NewAggregationQuery().WithSum("n", "sum").WithAvg("n", "avg"), []string{"sum", "avg"}
		}
		classic, err := aq.Get(ctx)
		if err != nil {
			t.Fatalf("aggregation %d: %v", i, err)
		}
		res, err := aq.Pipeline().Execute(ctx).Results().GetAll()
		if err != nil || len(res) != 1 {
			t.Fatalf("aggregation %d pipeline: %v %v", i, res, err)
		}
		got, want := res[0].Data(), classic.Data()
		for _, k := range keys {
			if fmt.Sprint(got[k]) != fmt.Sprint(want[k]) {
				t.Errorf("aggregation %d (%s %s %v) %s: classic %v, pipeline %v", i, f, op, v, k, want[k], got[k])
			}
		}
	}
}

func names(it *firestore.DocumentIterator) ([]string, error) {
	defer it.Stop()
	var out []string
	for {
		d, err := it.Next()
		if err == iterator.Done {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, d.Ref.ID)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
