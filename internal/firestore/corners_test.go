package firestore_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/grpc/codes"
)

// The corners of production Firestore that the SDKs' own tests pin down
// (issue 18), through the unmodified Go SDK.

func TestConformance_NumericDocumentIDs(t *testing.T) {
	ctx := context.Background()
	_, c := start(t)
	col := c.Collection("legacy")
	for _, id := range []string{"a", "B", "__id10__", "__id7__", "__id-3__", "__id9223372036854775807__", "__id7__x"} {
		if _, err := col.Doc(id).Set(ctx, map[string]any{"id": id}); err != nil {
			t.Fatalf("set %s: %v", id, err)
		}
	}
	const byName = "__id-3__,__id7__,__id10__,__id9223372036854775807__,B,__id7__x,a"
	if got := ids(t, col.OrderBy(firestore.DocumentID, firestore.Asc)); got != byName {
		t.Errorf("by name: %s, want %s", got, byName)
	}
	if got := ids(t, col.Query); got != byName {
		t.Errorf("default order: %s, want %s", got, byName)
	}
	if got := ids(t, col.OrderBy(firestore.DocumentID, firestore.Desc).Limit(3)); got != "a,__id7__x,B" {
		t.Errorf("by name, descending: %s", got)
	}
	if got := ids(t, col.Where(firestore.DocumentID, ">", col.Doc("__id7__")).Where(firestore.DocumentID, "<", col.Doc("B"))); got != "__id10__,__id9223372036854775807__" {
		t.Errorf("name range: %s", got)
	}
	if got := ids(t, col.OrderBy(firestore.DocumentID, firestore.Asc).StartAfter("__id10__").Limit(2)); got != "__id9223372036854775807__,B" {
		t.Errorf("cursor on a numeric id: %s", got)
	}
	refs, err := col.DocumentRefs(ctx).GetAll()
	if err != nil || len(refs) != 7 || refs[0].ID != "__id-3__" || refs[4].ID != "B" {
		t.Errorf("listing: %v %v", refs, err)
	}
	for _, id := range []string{"__id__", "__idx__", "__id1x__", "__id+1__", "__id9223372036854775808__", "__other__"} {
		_, err := col.Doc(id).Set(ctx, map[string]any{"x": 1})
		wantCode(t, err, codes.InvalidArgument, "reserved")
	}
}

func TestConformance_NotEqualAndNotInSkipNullAndNaN(t *testing.T) {
	_, c := start(t)
	seed(t, c, "vals", map[string]map[string]any{
		"one": {"v": 1}, "two": {"v": 2}, "null": {"v": nil}, "nan": {"v": math.NaN()}, "missing": {}, "text": {"v": "x"},
	})
	col := c.Collection("vals")
	for _, tc := range []struct {
		name string
		q    firestore.Query
		want string
	}{
		{"!= a number", col.Where("v", "!=", 1), "nan,two,text"},
		{"!= NaN", col.Where("v", "!=", math.NaN()), "one,two,text"},
		{"!= null", col.Where("v", "!=", nil), "nan,one,two,text"},
		{"not-in numbers", col.Where("v", "not-in", []any{1, 2}), "nan,text"},
		{"not-in [NaN]", col.Where("v", "not-in", []any{math.NaN()}), "one,two,text"},
		{"not-in [null]", col.Where("v", "not-in", []any{nil}), ""},
		{"not-in [1, null]", col.Where("v", "not-in", []any{1, nil}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ids(t, tc.q); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestConformance_ImplicitOrderPutsNameLast(t *testing.T) {
	_, c := start(t)
	seed(t, c, "ranked", map[string]map[string]any{
		"d1": {"a": 3, "b": 1}, "d2": {"a": 1, "b": 2}, "d3": {"a": 2, "b": 1}, "d4": {"a": 2, "b": 0},
	})
	col := c.Collection("ranked")
	q := col.Where(firestore.DocumentID, ">=", col.Doc("d1")).Where("a", ">", 0)
	if got := ids(t, q); got != "d2,d3,d4,d1" {
		t.Errorf("name and a: %s, want by a, then name", got)
	}
	q = col.Where("b", ">=", 0).Where(firestore.DocumentID, "!=", col.Doc("d9")).Where("a", ">", 0)
	if got := ids(t, q); got != "d2,d4,d3,d1" {
		t.Errorf("b, name and a: %s, want by a, then b, then name", got)
	}
}

// aggregated runs count, sum and avg aggregations and prints their values.
func aggregated(t *testing.T, q *firestore.AggregationQuery) string {
	t.Helper()
	res, err := q.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, alias := range []string{"count", "sum", "avg", "sum2", "avg2"} {
		if v, ok := res[alias]; ok {
			out += fmt.Sprintf("%s=%#v ", alias, aggregate(v))
		}
	}
	return out
}

func TestConformance_AggregationsAsProduction(t *testing.T) {
	_, c := start(t)
	// The Go SDK's own integration test data, with the results production gives.
	weights := map[string]map[string]any{}
	for i, w := range []float64{1.5, 2.6, 3.7, 4.8, 5.9, 6.0, 7.1, 8.2} {
		weights[fmt.Sprint("w", i)] = map[string]any{"weight": w}
	}
	seed(t, c, "weights", weights)
	col := c.Collection("weights")
	all := func(q firestore.Query) *firestore.AggregationQuery {
		return q.NewAggregationQuery().WithCount("count").WithSum("weight", "sum").WithAvg("weight", "avg")
	}
	for _, tc := range []struct {
		name string
		q    *firestore.AggregationQuery
		want string
	}{
		{"all", all(col.Query), "count=8 sum=39.8 avg=4.975 "},
		{"start after", all(col.Where("weight", ">=", 2.6).OrderBy("weight", firestore.Asc).StartAfter(3.7)), "count=5 sum=32 avg=6.4 "},
		{"end at", all(col.Where("weight", ">=", 2.6).OrderBy("weight", firestore.Asc).EndAt(7.1)), "count=6 sum=30.1 avg=5.016666666666667 "},
	} {
		if got := aggregated(t, tc.q); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}

	// With several aggregations, only documents having every aggregated field count.
	seed(t, c, "books", map[string]map[string]any{
		"a": {"pages": 100, "year": 1980}, "b": {"pages": 50, "year": 2020}, "c": {"pages": 150, "year": 2021}, "d": {"pages": 50},
		"e": {"pages": "many", "year": 2007},
	})
	q := c.Collection("books").NewAggregationQuery().WithCount("count").WithSum("pages", "sum").WithAvg("pages", "avg").WithAvg("year", "avg2")
	if got, want := aggregated(t, q), "count=4 sum=300 avg=100 avg2=2007 "; got != want {
		t.Errorf("several aggregations: %s, want %s", got, want)
	}

	// Integer sums are exact and become doubles only when the total overflows.
	seed(t, c, "big", map[string]map[string]any{"a": {"n": int64(math.MaxInt64), "m": int64(math.MaxInt64)}, "b": {"n": 1, "m": int64(math.MaxInt64)}, "c": {"n": -101, "m": 0}})
	q = c.Collection("big").NewAggregationQuery().WithSum("n", "sum").WithSum("m", "sum2")
	if got, want := aggregated(t, q), fmt.Sprintf("sum=%d sum2=%#v ", int64(math.MaxInt64-100), float64(math.MaxInt64)*2); got != want {
		t.Errorf("integer sums: %s, want %s", got, want)
	}
}

func TestConformance_DeleteResultHasNoUpdateTime(t *testing.T) {
	ctx := context.Background()
	_, c := start(t)
	doc := c.Doc("gone/a")
	if _, err := doc.Set(ctx, map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
	wr, err := doc.Delete(ctx)
	if err != nil || !wr.UpdateTime.IsZero() {
		t.Errorf("delete: update time %v (err %v), want none", wr.UpdateTime, err)
	}
	//lint:ignore SA1019 WriteBatch is what the SDKs still send for batched writes; loupe serves it as Firestore does
	results, err := c.Batch().Set(c.Doc("gone/b"), map[string]any{"x": 1}).Delete(c.Doc("gone/b")).Delete(c.Doc("gone/never")).Commit(ctx)
	if err != nil || len(results) != 3 || results[0].UpdateTime.IsZero() || !results[1].UpdateTime.IsZero() || !results[2].UpdateTime.IsZero() {
		t.Errorf("batch results: %v %v, want an update time for the set only", results, err)
	}
}

// TestConformance_BSONNumbers: an Enterprise database keeps a Decimal128
// as written (1.50 stays 1.50, 1.2e3 stays 1.2e3), compares it by value
// (1.50 equals 1.5 in filters and sorts beside it), and increments,
// maximums and minimums Int32s and Decimal128s as production's SDKs model
// the server: a Decimal128 stays a Decimal128 with its trailing zeros, an
// Int32 widens to an integer or a double.
func TestConformance_BSONNumbers(t *testing.T) {
	ctx := context.Background()
	cfg := filepath.Join(t.TempDir(), "firebase.json")
	if err := os.WriteFile(cfg, []byte(`{"firestore": {"edition": "enterprise"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, loupetest.Start(t, loupetest.Options{InMemory: true, Config: cfg}))
	col := c.Collection("nums")
	written := map[string]map[string]any{
		"a": {"k": firestore.BSONDecimal128("1.50"), "list": []any{firestore.BSONDecimal128("1.50")}, "zero": firestore.BSONDecimal128("0.0"), "sci": firestore.BSONDecimal128("1.2e3")},
		"b": {"k": firestore.BSONDecimal128("1.5")},
		"c": {"k": firestore.BSONDecimal128("15E-1")},
		"d": {"k": 1.5},
		"e": {"k": firestore.BSONInt32(2)},
		"f": {"k": firestore.BSONDecimal128("2.000")},
	}
	seed(t, c, "nums", written)
	snap, err := col.Doc("a").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Data(); !reflect.DeepEqual(got, written["a"]) {
		t.Errorf("read back %#v, want %#v as written", got, written["a"])
	}
	for _, c := range []struct {
		name string
		q    firestore.Query
		want string
	}{
		{"== 1.500", col.Where("k", "==", firestore.BSONDecimal128("1.500")), "a,b,c,d"},
		{"in 2, 9", col.Where("k", "in", []any{firestore.BSONDecimal128("2"), 9}), "e,f"},
		{"not-in 1.5", col.Where("k", "not-in", []any{firestore.BSONDecimal128("1.5")}), "e,f"},
		{"array-contains 1.5", col.Where("list", "array-contains", firestore.BSONDecimal128("1.5")), "a"},
		{"> 1.50 descending", col.Where("k", ">", firestore.BSONDecimal128("1.50")).OrderBy("k", firestore.Desc), "f,e"},
		{"ascending", col.OrderBy("k", firestore.Asc), "a,b,c,d,e,f"},
	} {
		if got := ids(t, c.q); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	set := func(id string, data map[string]any) *firestore.DocumentRef {
		ref := c.Collection("counters").Doc(id)
		if _, err := ref.Set(ctx, data); err != nil {
			t.Fatal(err)
		}
		return ref
	}
	ref := set("x", map[string]any{
		"dec": firestore.BSONDecimal128("1.50"), "long": firestore.BSONDecimal128("1.000000000000000000000000000000001"),
		"i32": firestore.BSONInt32(2), "i32f": firestore.BSONInt32(2), "max": firestore.BSONDecimal128("1.50"), "min": firestore.BSONDecimal128("1.50"),
	})
	if _, err := ref.Update(ctx, []firestore.Update{
		{Path: "dec", Value: firestore.Increment(1)},
		{Path: "long", Value: firestore.Increment(1)},
		{Path: "i32", Value: firestore.Increment(1)},
		{Path: "i32f", Value: firestore.Increment(0.5)},
		{Path: "max", Value: firestore.FieldTransformMaximum(1)},
		{Path: "min", Value: firestore.FieldTransformMinimum(1)},
	}); err != nil {
		t.Fatal(err)
	}
	snap, err = ref.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"dec": firestore.BSONDecimal128("2.50"), "long": firestore.BSONDecimal128("2.000000000000000000000000000000001"),
		"i32": int64(3), "i32f": 2.5, "max": firestore.BSONDecimal128("1.50"), "min": int64(1),
	}
	if got := snap.Data(); !reflect.DeepEqual(got, want) {
		t.Errorf("after transforms %#v, want %#v", got, want)
	}
	for _, bad := range []string{"abc", "1 23. 4", ""} {
		_, err := c.Collection("counters").Doc("bad").Set(ctx, map[string]any{"d": firestore.BSONDecimal128(bad)})
		wantCode(t, err, codes.InvalidArgument, "Decimal128")
	}
}
