package firestore_test

import (
	"context"
	"testing"

	"cloud.google.com/go/firestore"
)

// Firestore as production answers it (issue 28), through the unmodified Go
// SDK against a real `loupe serve`.

// TestFidelity_DocumentIDsAreTotallyOrdered writes ids that a comparator
// deciding by length when one id is a prefix of another put in a cycle
// (__id < __id5__ < 12 < __id), in several orders, and reads them back in
// name order, in ranges and in pages: each read sees the SDKs' order.
func TestFidelity_DocumentIDsAreTotallyOrdered(t *testing.T) {
	ctx := context.Background()
	_, c := start(t)
	written := []string{"__id5__", "__id", "12", "__id-1__", "__id51__", "__id5", "1", "__id500__", "__idx", "_"}
	const want = "__id-1__,__id5__,__id51__,__id500__,1,12,_,__id,__id5,__idx"
	for _, coll := range []string{"forward", "backward", "interleaved"} {
		col := c.Collection(coll)
		order := append([]string(nil), written...)
		switch coll {
		case "backward":
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		case "interleaved":
			order = []string{"12", "__id", "__id5__", "_", "__id51__", "1", "__idx", "__id-1__", "__id5", "__id500__"}
		}
		for _, id := range order {
			if _, err := col.Doc(id).Set(ctx, map[string]any{"v": 1}); err != nil {
				t.Fatal(err)
			}
		}
		if got := ids(t, col.OrderBy(firestore.DocumentID, firestore.Asc)); got != want {
			t.Errorf("%s: by name %s, want %s", coll, got, want)
		}
		if got := ids(t, col.Where("v", "==", 1)); got != want {
			t.Errorf("%s: by value then name %s, want %s", coll, got, want)
		}
		if got := ids(t, col.Where(firestore.DocumentID, ">", col.Doc("12")).Where(firestore.DocumentID, "<=", col.Doc("__id5"))); got != "_,__id,__id5" {
			t.Errorf("%s: range (12, __id5] %s", coll, got)
		}
		if got := ids(t, col.OrderBy(firestore.DocumentID, firestore.Asc).StartAfter("__id500__").Limit(3)); got != "1,12,_" {
			t.Errorf("%s: page after __id500__ %s", coll, got)
		}
	}
}
