package firestore_test

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestConformance_Vectors: vectors are stored and returned as vectors and
// order after arrays and before maps, by dimension and then element by
// element, in queries, filters, cursors and listeners (the SDKs' type order).
func TestConformance_Vectors(t *testing.T) {
	ctx := context.Background()
	_, c := start(t)
	values := map[string]any{
		"arr":  []any{9.0, 9.0, 9.0},
		"v1":   firestore.Vector64{100},
		"v12":  firestore.Vector64{1, 2},
		"v13":  firestore.Vector32{1, 3},
		"v000": firestore.Vector64{0, 0, 0},
		"map":  map[string]any{"a": 1},
	}
	for id, v := range values {
		if _, err := c.Collection("vec").Doc(id).Set(ctx, map[string]any{"v": v, "nested": map[string]any{"e": firestore.Vector64{0.5}}}); err != nil {
			t.Fatalf("set %s: %v", id, err)
		}
	}
	snap, err := c.Doc("vec/v12").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		V      firestore.Vector64 `firestore:"v"`
		Nested struct {
			E firestore.Vector32 `firestore:"e"`
		} `firestore:"nested"`
	}
	if err := snap.DataTo(&got); err != nil || !reflect.DeepEqual(got.V, firestore.Vector64{1, 2}) || !reflect.DeepEqual(got.Nested.E, firestore.Vector32{0.5}) {
		t.Errorf("read back %+v, %v", got, err)
	}
	order := "arr,v1,v12,v13,v000,map"
	if got := ids(t, c.Collection("vec").OrderBy("v", firestore.Asc)); got != order {
		t.Errorf("ascending = %v, want %v", got, order)
	}
	if got := ids(t, c.Collection("vec").Where("v", "==", firestore.Vector64{1, 3})); got != "v13" {
		t.Errorf("== vector = %v", got)
	}
	if got := ids(t, c.Collection("vec").Where("v", ">", firestore.Vector64{1, 2})); got != "v13,v000" {
		t.Errorf("> [1,2] = %v (only vectors compare with a vector)", got)
	}
	if got := ids(t, c.Collection("vec").OrderBy("v", firestore.Desc).StartAfter(firestore.Vector64{1, 3})); got != "v12,v1,arr" {
		t.Errorf("desc after [1,3] = %v", got)
	}

	it := c.Collection("vec").OrderBy("v", firestore.Asc).Limit(3).Snapshots(ctx)
	defer it.Stop()
	first, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	// The Go SDK sorts a listener's documents with its own comparator, which
	// orders vectors as maps; which documents are in the window is the server's.
	if got := snapIDs(t, first.Documents); !reflect.DeepEqual(got, []string{"arr", "v1", "v12"}) {
		t.Errorf("listener = %v", got)
	}
	if _, err := c.Doc("vec/v0").Set(ctx, map[string]any{"v": firestore.Vector64{}}); err != nil {
		t.Fatal(err)
	}
	next, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	if got := snapIDs(t, next.Documents); !reflect.DeepEqual(got, []string{"arr", "v0", "v1"}) {
		t.Errorf("listener after an empty vector = %v", got)
	}
}

// snapIDs returns the ids of a snapshot's documents, sorted.
func snapIDs(t *testing.T, docs *firestore.DocumentIterator) []string {
	t.Helper()
	out := []string{}
	for {
		d, err := docs.Next()
		if err == iterator.Done {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Ref.ID)
		slices.Sort(out)
	}
}

// TestConformance_MalformedVectors: a map marked as a vector must be one;
// other reserved field names stay refused, and nothing is written.
func TestConformance_MalformedVectors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, c := start(t)
	for _, tc := range []struct {
		name string
		v    map[string]any
		msg  string
	}{
		{"integers", map[string]any{"__type__": "__vector__", "value": []any{1, 2}}, `Vector field "e" must hold only doubles`},
		{"not an array", map[string]any{"__type__": "__vector__", "value": "1,2"}, `Vector field "e" must have a "value" field`},
		{"no value", map[string]any{"__type__": "__vector__"}, `Vector field "e" must have a "value" field`},
		{"extra field", map[string]any{"__type__": "__vector__", "value": []any{1.0}, "x": 1}, `unexpected field "x"`},
		{"other type", map[string]any{"__type__": "__other__", "value": []any{1.0}}, `Field name "__type__" is reserved.`},
		{"other reserved name", map[string]any{"__value__": 1}, `Field name "__value__" is reserved.`},
	} {
		_, err := c.Doc("bad/vector").Set(ctx, map[string]any{"ok": 1, "e": tc.v})
		wantCode(t, err, codes.InvalidArgument, tc.msg)
	}
	if _, err := c.Doc("bad/vector").Get(ctx); status.Code(err) != codes.NotFound {
		t.Errorf("a refused vector left a document behind: %v", err)
	}
}
