package firestore_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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

// TestFidelity_TimestampsAreMicroseconds writes timestamps with nanoseconds:
// Firestore keeps them to the microsecond, in stored values (nested ones
// and array-union operands too) and in the values of filters and cursors,
// and every time it answers with is a microsecond.
func TestFidelity_TimestampsAreMicroseconds(t *testing.T) {
	ctx := context.Background()
	_, c := start(t)
	micro := func(what string, at time.Time) {
		t.Helper()
		if at.IsZero() || at.Nanosecond()%1000 != 0 {
			t.Errorf("%s %v is not a microsecond", what, at.Format(time.RFC3339Nano))
		}
	}
	// Before any commit the read time is the clock's.
	snap, err := c.Doc("stamps/none").Get(ctx)
	if status.Code(err) != codes.NotFound {
		t.Fatalf("get a missing document: %v", err)
	}
	micro("read time before any commit", snap.ReadTime)

	nanos := time.Unix(100, 123456789).UTC()
	micros := time.Unix(100, 123456000).UTC()
	millis := time.Unix(100, 123000000).UTC()
	doc := c.Doc("stamps/a")
	wr, err := doc.Set(ctx, map[string]any{"t": nanos, "nested": map[string]any{"list": []any{nanos}}})
	if err != nil {
		t.Fatal(err)
	}
	micro("update time", wr.UpdateTime)
	if _, err := doc.Update(ctx, []firestore.Update{{Path: "union", Value: firestore.ArrayUnion(nanos, micros, time.Unix(100, 123456999))}}); err != nil {
		t.Fatal(err)
	}
	snap, err = doc.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	micro("read time", snap.ReadTime)
	micro("create time", snap.CreateTime)
	micro("update time", snap.UpdateTime)
	got := snap.Data()
	if !got["t"].(time.Time).Equal(micros) || !got["nested"].(map[string]any)["list"].([]any)[0].(time.Time).Equal(micros) {
		t.Errorf("stored %v, want %v", got, micros)
	}
	if union := got["union"].([]any); len(union) != 1 || !union[0].(time.Time).Equal(micros) {
		t.Errorf("array union of three spellings of one microsecond: %v", union)
	}
	col := c.Collection("stamps")
	for _, tc := range []struct {
		name string
		q    firestore.Query
		want string
	}{
		{"== nanoseconds", col.Where("t", "==", nanos), "a"},
		{"== microseconds", col.Where("t", "==", micros), "a"},
		{"== milliseconds", col.Where("t", "==", millis), ""},
		{"> nanoseconds", col.Where("t", ">", nanos), ""},
		{"in nanoseconds", col.Where("t", "in", []any{nanos}), "a"},
		{"start at nanoseconds", col.OrderBy("t", firestore.Asc).StartAt(nanos), "a"},
		{"start after nanoseconds", col.OrderBy("t", firestore.Asc).StartAfter(time.Unix(100, 123455999)), "a"},
		{"end before nanoseconds", col.OrderBy("t", firestore.Asc).EndBefore(nanos), ""},
	} {
		if got := ids(t, tc.q); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestFidelity_UpdateAfterDeleteInOneCommit deletes a document and then
// updates it in one transaction: INVALID_ARGUMENT, as production answers
// (the JS SDK's transaction tests pin it), where updating a document that
// never existed is NOT_FOUND.
func TestFidelity_UpdateAfterDeleteInOneCommit(t *testing.T) {
	ctx := context.Background()
	_, c := start(t)
	for _, exists := range []bool{true, false} {
		doc := c.Collection("txn").NewDoc()
		if exists {
			if _, err := doc.Set(ctx, map[string]any{"foo": "bar0"}); err != nil {
				t.Fatal(err)
			}
		}
		err := c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
			if err := tx.Delete(doc); err != nil {
				return err
			}
			return tx.Update(doc, []firestore.Update{{Path: "foo", Value: "bar2"}})
		})
		wantCode(t, err, codes.InvalidArgument, "deleted")
		err = c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
			return tx.Update(c.Collection("txn").NewDoc(), []firestore.Update{{Path: "foo", Value: "bar1"}})
		})
		wantCode(t, err, codes.NotFound, "No document to update")
		snap, err := doc.Get(ctx)
		if exists && (err != nil || snap.Data()["foo"] != "bar0") {
			t.Errorf("existing document after the failed transaction: %v %v", snap, err)
		}
	}
}

// TestFidelity_InAndArrayContainsAnyNullMatchNothing: null in an in or
// array-contains-any list matches nothing (== null is IS_NULL, which does).
func TestFidelity_InAndArrayContainsAnyNullMatchNothing(t *testing.T) {
	_, c := start(t)
	seed(t, c, "nulls", map[string]map[string]any{
		"null": {"v": nil, "a": []any{nil}}, "one": {"v": 1, "a": []any{1, nil}}, "missing": {},
	})
	col := c.Collection("nulls")
	for _, tc := range []struct {
		name string
		q    firestore.Query
		want string
	}{
		{"in [null]", col.Where("v", "in", []any{nil}), ""},
		{"in [null, 1]", col.Where("v", "in", []any{nil, 1}), "one"},
		{"array-contains-any [null]", col.Where("a", "array-contains-any", []any{nil}), ""},
		{"array-contains-any [null, 1]", col.Where("a", "array-contains-any", []any{nil, 1}), "one"},
		{"== null", col.Where("v", "==", nil), "null"},
	} {
		if got := ids(t, tc.q); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
