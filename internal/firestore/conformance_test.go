package firestore_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// These tests drive a real `loupe serve` through the unmodified Go SDK in
// emulator mode (FIRESTORE_EMULATOR_HOST), as every Go program would.

const project = "demo-loupe"

func newClient(t *testing.T, inst *loupetest.Instance) *firestore.Client {
	t.Helper()
	return clientFor(t, inst.Host)
}

func start(t *testing.T) (*loupetest.Instance, *firestore.Client) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	return inst, newClient(t, inst)
}

// wantCode checks an error a client saw: its code, a part of its message,
// and that the message names no path of the server's (noServerPath).
func wantCode(t *testing.T, err error, code codes.Code, msgPart string) {
	t.Helper()
	if status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), msgPart) {
		t.Errorf("error = %v, want %s containing %q", err, code, msgPart)
	}
	noServerPath(t, status.Convert(err).Message())
}

// noServerPath fails t when an error message a client saw names a folder
// of the server's: the temporary folder the tests' data dirs live in, or
// the repository (where firebase.json and the rules are).
func noServerPath(t *testing.T, msg string) {
	t.Helper()
	for _, dir := range []string{os.TempDir(), filepath.Dir(loupetest.RepoFile("go.mod"))} {
		if dir != "" && dir != "/" && strings.Contains(msg, dir) {
			t.Errorf("error message %q names the server's folder %s", msg, dir)
		}
	}
}

func TestConformance_DocumentsAndPreconditions(t *testing.T) {
	ctx := context.Background()
	_, c := start(t)
	doc := c.Doc("users/alice")
	if _, err := doc.Set(ctx, map[string]any{"name": "Alice", "age": 30, "tags": []string{"a"}, "nested": map[string]any{"x": 1}}); err != nil {
		t.Fatal(err)
	}
	snap, err := doc.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Data()["name"] != "Alice" || snap.Data()["age"] != int64(30) {
		t.Errorf("data = %v", snap.Data())
	}
	if _, err := doc.Update(ctx, []firestore.Update{{Path: "nested.y", Value: 2}, {Path: "age", Value: firestore.Delete}}); err != nil {
		t.Fatal(err)
	}
	snap, _ = doc.Get(ctx)
	if _, ok := snap.Data()["age"]; ok || snap.Data()["nested"].(map[string]any)["y"] != int64(2) || snap.Data()["nested"].(map[string]any)["x"] != int64(1) {
		t.Errorf("after update: %v", snap.Data())
	}
	if _, err := doc.Set(ctx, map[string]any{"city": "Paris"}, firestore.MergeAll); err != nil {
		t.Fatal(err)
	}
	snap, _ = doc.Get(ctx)
	if snap.Data()["city"] != "Paris" || snap.Data()["name"] != "Alice" {
		t.Errorf("after merge: %v", snap.Data())
	}
	_, err = doc.Create(ctx, map[string]any{"x": 1})
	wantCode(t, err, codes.AlreadyExists, "Document already exists: projects/demo-loupe/databases/(default)/documents/users/alice")
	_, err = c.Doc("users/nobody").Update(ctx, []firestore.Update{{Path: "x", Value: 1}})
	wantCode(t, err, codes.NotFound, "No document to update")
	_, err = c.Doc("users/nobody").Get(ctx)
	wantCode(t, err, codes.NotFound, "not found")
	_, err = doc.Delete(ctx, firestore.LastUpdateTime(time.Unix(1, 0)))
	wantCode(t, err, codes.FailedPrecondition, "modified")
	if _, err := doc.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := doc.Get(ctx); status.Code(err) != codes.NotFound {
		t.Errorf("after delete: %v", err)
	}
}

func TestConformance_Transforms(t *testing.T) {
	ctx := context.Background()
	_, c := start(t)
	doc := c.Doc("counters/c")
	before := time.Now().Add(-time.Second)
	_, err := doc.Set(ctx, map[string]any{"n": 1, "f": 1.5, "list": []any{1, 2}, "max": 5, "min": 5, "at": firestore.ServerTimestamp})
	if err != nil {
		t.Fatal(err)
	}
	_, err = doc.Update(ctx, []firestore.Update{
		{Path: "n", Value: firestore.Increment(2)},
		{Path: "f", Value: firestore.Increment(1)},
		{Path: "fresh", Value: firestore.Increment(3)},
		{Path: "list", Value: firestore.ArrayUnion(2, 3)},
		{Path: "max", Value: firestore.FieldTransformMaximum(9)},
		{Path: "min", Value: firestore.FieldTransformMinimum(2.5)},
	})
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := doc.Get(ctx)
	d := snap.Data()
	if d["n"] != int64(3) || d["f"] != 2.5 || d["fresh"] != int64(3) || d["max"] != int64(9) || d["min"] != 2.5 {
		t.Errorf("numbers = %v", d)
	}
	if fmt.Sprint(d["list"]) != "[1 2 3]" {
		t.Errorf("list = %v", d["list"])
	}
	if at, ok := d["at"].(time.Time); !ok || at.Before(before) || !at.Equal(snap.CreateTime) {
		t.Errorf("server timestamp %v, create time %v", d["at"], snap.CreateTime)
	}
	if _, err := doc.Update(ctx, []firestore.Update{{Path: "list", Value: firestore.ArrayRemove(1, 3)}}); err != nil {
		t.Fatal(err)
	}
	snap, _ = doc.Get(ctx)
	if fmt.Sprint(snap.Data()["list"]) != "[2]" {
		t.Errorf("after remove: %v", snap.Data()["list"])
	}
}

// aggregate unwraps an aggregation result value as the SDK returns it.
func aggregate(v any) any {
	switch x := v.(type) {
	case *firestorepb.Value:
		switch t := x.GetValueType().(type) {
		case *firestorepb.Value_IntegerValue:
			return t.IntegerValue
		case *firestorepb.Value_DoubleValue:
			return t.DoubleValue
		}
	}
	return v
}

func seed(t *testing.T, c *firestore.Client, coll string, docs map[string]map[string]any) {
	t.Helper()
	//lint:ignore SA1019 WriteBatch is what the SDKs still send for batched writes; loupe serves it as Firestore does
	b := c.Batch()
	for id, data := range docs {
		b.Set(c.Collection(coll).Doc(id), data)
	}
	if _, err := b.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func ids(t *testing.T, q firestore.Query) string {
	t.Helper()
	snaps, err := q.Documents(context.Background()).GetAll()
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	var out []string
	for _, s := range snaps {
		out = append(out, s.Ref.ID)
	}
	return strings.Join(out, ",")
}

func TestConformance_Queries(t *testing.T) {
	_, c := start(t)
	seed(t, c, "cities", map[string]map[string]any{
		"SF":  {"name": "San Francisco", "state": "CA", "pop": 860000, "regions": []string{"west", "coast"}, "capital": false},
		"LA":  {"name": "Los Angeles", "state": "CA", "pop": 3900000, "regions": []string{"west", "coast"}, "capital": false},
		"DC":  {"name": "Washington", "state": nil, "pop": 680000, "regions": []string{"east"}, "capital": true},
		"TOK": {"name": "Tokyo", "pop": 9000000.5, "regions": []string{"asia"}, "capital": true},
		"NAN": {"name": "Nowhere", "pop": math.NaN()},
	})
	col := c.Collection("cities")
	for _, tc := range []struct {
		name string
		q    firestore.Query
		want string
	}{
		{"equality", col.Where("state", "==", "CA"), "LA,SF"},
		{"range orders by the field, then name", col.Where("pop", ">", 700000), "SF,LA,TOK"},
		{"integers and doubles compare by value", col.Where("pop", ">=", 9000000), "TOK"},
		{"not equal skips missing and null", col.Where("state", "!=", "CA"), ""},
		{"in", col.Where("name", "in", []string{"Tokyo", "Washington"}), "DC,TOK"},
		{"not in", col.Where("capital", "not-in", []bool{false}), "DC,TOK"},
		{"array contains", col.Where("regions", "array-contains", "west"), "LA,SF"},
		{"array contains any", col.Where("regions", "array-contains-any", []string{"east", "asia"}), "DC,TOK"},
		{"is null", col.Where("state", "==", nil), "DC"},
		{"is NaN", col.Where("pop", "==", math.NaN()), "NAN"},
		{"order desc with limit", col.OrderBy("pop", firestore.Desc).Limit(2), "TOK,LA"},
		{"NaN sorts first", col.OrderBy("pop", firestore.Asc).Limit(2), "NAN,DC"},
		{"limit to last", col.OrderBy("pop", firestore.Asc).LimitToLast(2), "LA,TOK"},
		{"start after", col.OrderBy("pop", firestore.Asc).StartAfter(680000), "SF,LA,TOK"},
		{"end before", col.OrderBy("pop", firestore.Asc).EndBefore(860000), "NAN,DC"},
		{"offset", col.OrderBy("pop", firestore.Asc).Offset(3), "LA,TOK"},
		{"name order", col.OrderBy(firestore.DocumentID, firestore.Desc).Limit(2), "TOK,SF"},
		{"name filter", col.Where(firestore.DocumentID, ">=", col.Doc("SF")), "SF,TOK"},
		{"or", col.WhereEntity(firestore.OrFilter{Filters: []firestore.EntityFilter{
			firestore.PropertyFilter{Path: "state", Operator: "==", Value: "CA"},
			firestore.PropertyFilter{Path: "capital", Operator: "==", Value: true},
		}}), "DC,LA,SF,TOK"},
		{"and of or", col.WhereEntity(firestore.AndFilter{Filters: []firestore.EntityFilter{
			firestore.PropertyFilter{Path: "pop", Operator: "<", Value: 1000000},
			firestore.OrFilter{Filters: []firestore.EntityFilter{
				firestore.PropertyFilter{Path: "state", Operator: "==", Value: "CA"},
				firestore.PropertyFilter{Path: "capital", Operator: "==", Value: true},
			}},
		}}), "DC,SF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ids(t, tc.q); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	snaps, err := col.Select("name").Where("state", "==", "CA").Documents(context.Background()).GetAll()
	if err != nil || len(snaps) != 2 || len(snaps[0].Data()) != 1 {
		t.Errorf("projection: %v %v", snaps, err)
	}
	// A projection filters and orders by fields it does not return.
	snaps, err = col.Select("name", "regions").Where("capital", "==", true).OrderBy("pop", firestore.Desc).Documents(context.Background()).GetAll()
	var got []any
	for _, s := range snaps {
		got = append(got, s.Ref.ID, s.Data())
	}
	want := []any{"TOK", map[string]any{"name": "Tokyo", "regions": []any{"asia"}}, "DC", map[string]any{"name": "Washington", "regions": []any{"east"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("projection with filter and order = %v, %v; want %v", got, err, want)
	}
}

func TestConformance_CollectionGroupsAndListing(t *testing.T) {
	ctx := context.Background()
	_, c := start(t)
	for _, path := range []string{"feedbackRequests/r1/comments/a", "feedbackRequests/r1/comments/b", "feedbackRequests/r2/comments/c", "other/x/comments/d"} {
		if _, err := c.Doc(path).Set(ctx, map[string]any{"deleted": false}); err != nil {
			t.Fatal(err)
		}
	}
	if got := ids(t, c.CollectionGroup("comments").Query); got != "a,b,c,d" {
		t.Errorf("collection group = %s", got)
	}
	if got := ids(t, c.Collection("feedbackRequests/r1/comments").Query); got != "a,b" {
		t.Errorf("subcollection = %s", got)
	}
	cols, err := c.Collections(ctx).GetAll()
	if err != nil || len(cols) != 2 || cols[0].ID != "feedbackRequests" {
		t.Errorf("collections = %v %v", cols, err)
	}
	refs, err := c.Collection("feedbackRequests").DocumentRefs(ctx).GetAll()
	if err != nil || len(refs) != 2 || refs[0].ID != "r1" {
		t.Errorf("missing parent documents = %v %v", refs, err)
	}
	// The SDK's pager asks ListCollectionIds and ListDocuments for pages.
	for i := range 9 {
		if _, err := c.Doc(fmt.Sprintf("feedbackRequests/r1/c%d/x", i)).Set(ctx, map[string]any{}); err != nil {
			t.Fatal(err)
		}
	}
	var pages [][]string
	pager := iterator.NewPager(c.Doc("feedbackRequests/r1").Collections(ctx), 4, "")
	for {
		var page []*firestore.CollectionRef
		token, err := pager.NextPage(&page)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, col := range page {
			ids = append(ids, col.ID)
		}
		pages = append(pages, ids)
		if token == "" {
			break
		}
	}
	if got := fmt.Sprint(pages); got != "[[c0 c1 c2 c3] [c4 c5 c6 c7] [c8 comments]]" {
		t.Errorf("collection pages = %s", got)
	}
	var docPage []*firestore.DocumentRef
	token, err := iterator.NewPager(c.Collection("feedbackRequests/r1/comments").DocumentRefs(ctx), 1, "").NextPage(&docPage)
	if err != nil || len(docPage) != 1 || docPage[0].ID != "a" || token == "" {
		t.Errorf("first page of one document = %v, next %q, %v", docPage, token, err)
	}
}

func TestConformance_Aggregations(t *testing.T) {
	ctx := context.Background()
	_, c := start(t)
	seed(t, c, "scores", map[string]map[string]any{
		"a": {"v": 1, "team": "x"}, "b": {"v": 2.5, "team": "x"}, "c": {"v": "text", "team": "x"}, "d": {"team": "y"},
	})
	q := c.Collection("scores").Where("team", "==", "x")
	res, err := q.NewAggregationQuery().
		WithCount("n").WithSum("v", "total").WithAvg("v", "mean").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(aggregate(res["n"]), aggregate(res["total"]), aggregate(res["mean"])); got != "3 3.5 1.75" {
		t.Errorf("aggregations = %v", res)
	}
}

func TestConformance_ConcurrentTransactionsCountExactly(t *testing.T) {
	ctx := context.Background()
	inst, c1 := start(t)
	c2 := newClient(t, inst)
	ref := c1.Doc("counters/shared")
	if _, err := ref.Set(ctx, map[string]any{"n": 0}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, c := range []*firestore.Client{c1, c2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				err := c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
					snap, err := tx.Get(c.Doc("counters/shared"))
					if err != nil {
						return err
					}
					return tx.Set(c.Doc("counters/shared"), map[string]any{"n": snap.Data()["n"].(int64) + 1})
				}, firestore.MaxAttempts(100))
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	snap, _ := ref.Get(ctx)
	if snap.Data()["n"] != int64(100) {
		t.Errorf("n = %v, want 100", snap.Data()["n"])
	}
}

func TestConformance_Snapshots(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, c := start(t)
	col := c.Collection("notifications")
	seed(t, c, "notifications", map[string]map[string]any{
		"n1": {"userId": "u", "at": 1}, "n2": {"userId": "u", "at": 2}, "other": {"userId": "v", "at": 3},
	})
	it := col.Where("userId", "==", "u").OrderBy("at", firestore.Desc).Limit(2).Snapshots(ctx)
	defer it.Stop()
	next := func() (string, string) {
		t.Helper()
		snap, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		var docs, changes []string
		for _, d := range snap.Changes {
			changes = append(changes, fmt.Sprint(d.Kind, ":", d.Doc.Ref.ID))
		}
		all, _ := snap.Documents.GetAll()
		for _, d := range all {
			docs = append(docs, d.Ref.ID)
		}
		return strings.Join(docs, ","), strings.Join(changes, " ")
	}
	if docs, _ := next(); docs != "n2,n1" {
		t.Errorf("initial = %s", docs)
	}
	if _, err := col.Doc("n3").Set(ctx, map[string]any{"userId": "u", "at": 5}); err != nil {
		t.Fatal(err)
	}
	if docs, changes := next(); docs != "n3,n2" || changes != "DocumentRemoved:n1 DocumentAdded:n3" {
		t.Errorf("after add: docs %s changes %s (n1 must leave the limit window)", docs, changes)
	}
	if _, err := col.Doc("n2").Update(ctx, []firestore.Update{{Path: "read", Value: true}}); err != nil {
		t.Fatal(err)
	}
	if docs, changes := next(); docs != "n3,n2" || changes != "DocumentModified:n2" {
		t.Errorf("after modify: docs %s changes %s", docs, changes)
	}
	if _, err := col.Doc("n3").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if docs, changes := next(); docs != "n2,n1" || changes != "DocumentRemoved:n3 DocumentAdded:n1" {
		t.Errorf("after delete: docs %s changes %s (n1 re-enters)", docs, changes)
	}
	docIt := c.Doc("notifications/missing").Snapshots(ctx)
	defer docIt.Stop()
	snap, err := docIt.Next()
	if err != nil || snap.Exists() {
		t.Fatalf("missing doc snapshot: %v %v", snap, err)
	}
	if _, err := c.Doc("notifications/missing").Set(ctx, map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
	if snap, err = docIt.Next(); err != nil || !snap.Exists() {
		t.Fatalf("created doc snapshot: %v %v", snap, err)
	}
}

func TestConformance_BadInput(t *testing.T) {
	ctx := context.Background()
	inst, c := start(t)
	//lint:ignore SA1019 WriteBatch is what the SDKs still send for batched writes; loupe serves it as Firestore does
	b := c.Batch()
	for i := range 501 {
		b.Set(c.Doc(fmt.Sprint("many/d", i)), map[string]any{"i": i})
	}
	_, err := b.Commit(ctx)
	wantCode(t, err, codes.InvalidArgument, "maximum 500 writes allowed per request")
	half := strings.Repeat("x", 1<<19)
	_, err = c.Doc("big/doc").Set(ctx, map[string]any{"a": half, "b": half})
	wantCode(t, err, codes.InvalidArgument, "exceeds the maximum allowed size of 1,048,576 bytes")
	// One field value: production's limit is 1,048,487 bytes, refused on its
	// own; a value at the limit fits a document (its name counted by ids).
	_, err = c.Doc("big/doc").Set(ctx, map[string]any{"blob": strings.Repeat("x", 1048488)})
	wantCode(t, err, codes.InvalidArgument, `The value of property "blob" is longer than 1048487 bytes.`)
	if _, err := c.Doc("big/doc").Set(ctx, map[string]any{"blob": strings.Repeat("x", 1048487)}); err != nil {
		t.Errorf("a 1,048,487-byte field value: %v, want it written", err)
	}
	// The Go SDK sends an array inside an array; the server refuses it.
	_, err = c.Doc("nested/doc").Set(ctx, map[string]any{"path": [][]float64{{1, 2}, {3, 4}}})
	wantCode(t, err, codes.InvalidArgument, "Property path contains an invalid nested entity.")
	deep := map[string]any{"leaf": 1}
	for range 21 {
		deep = map[string]any{"m": deep}
	}
	_, err = c.Doc("deep/doc").Set(ctx, deep)
	wantCode(t, err, codes.InvalidArgument, "too many nested")
	_, err = c.Doc("bad/__reserved__").Set(ctx, map[string]any{"x": 1})
	wantCode(t, err, codes.InvalidArgument, "reserved")
	if _, err := c.Doc("many/d0").Get(ctx); status.Code(err) != codes.NotFound {
		t.Errorf("a refused batch left a write behind: %v", err)
	}
	// A collection id is one segment; subcollections are queried through their parent.
	resp, err := http.Post(inst.URL+"/v1/projects/demo-loupe/databases/(default)/documents:runQuery", "application/json",
		strings.NewReader(`{"structuredQuery":{"from":[{"collectionId":"a/b/c"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "INVALID_ARGUMENT") {
		t.Errorf("runQuery with collectionId a/b/c = %d %s, want 400 INVALID_ARGUMENT", resp.StatusCode, body)
	}
}

func TestConformance_DurableAcrossKill(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	inst := loupetest.Start(t, loupetest.Options{Process: true, DataDir: dir})
	c := newClient(t, inst)
	for i := range 20 {
		if _, err := c.Doc(fmt.Sprint("durable/d", i)).Set(ctx, map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	inst.Kill()
	inst2 := loupetest.Start(t, loupetest.Options{DataDir: dir})
	c2 := newClient(t, inst2)
	n, err := c2.Collection("durable").NewAggregationQuery().WithCount("n").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if aggregate(n["n"]) != int64(20) {
		t.Errorf("after kill -9 and restart: %v documents, want 20", n["n"])
	}
}

func TestConformance_ExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	exportDir := t.TempDir() + "/export"
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--export-on-exit", exportDir}})
	c := newClient(t, inst)
	if _, err := c.Doc("users/u1").Set(ctx, map[string]any{"name": "U", "at": time.Date(2025, 1, 5, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	inst.Stop(t)
	inst2 := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--import", exportDir}})
	c2 := newClient(t, inst2)
	snap, err := c2.Doc("users/u1").Get(ctx)
	if err != nil || snap.Data()["name"] != "U" {
		t.Fatalf("imported: %v %v", snap, err)
	}
}

func TestConformance_ReadTimeAndReadOnlyTransactions(t *testing.T) {
	ctx := context.Background()
	_, c := start(t)
	doc := c.Doc("notes/one")
	t1 := writeNotesHistory(t, c)
	at := firestore.ReadTime(t1)

	snap, err := c.Doc("notes/one").WithReadOptions(at).Get(ctx) // WithReadOptions changes the ref
	if err != nil || snap.Data()["v"] != int64(1) || !snap.ReadTime.Equal(t1) {
		t.Errorf("get at t1 = %v read at %v, %v; want v 1 at %v", snap.Data(), snap.ReadTime, err, t1)
	}
	if _, err := doc.Get(ctx); status.Code(err) != codes.NotFound {
		t.Errorf("get now: %v, want NotFound", err)
	}
	if got := ids(t, c.Collection("notes").WithReadOptions(at).Query); got != "one" {
		t.Errorf("query at t1 = %q, want one", got)
	}
	if got := ids(t, c.Collection("notes").Query); got != "two" {
		t.Errorf("query now = %q, want two", got)
	}
	refs, err := c.Collection("notes").WithReadOptions(at).DocumentRefs(ctx).GetAll()
	if err != nil || len(refs) != 1 || refs[0].ID != "one" {
		t.Errorf("list at t1 = %v, %v; want one", refs, err)
	}

	err = c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(doc)
		if err != nil || snap.Data()["v"] != int64(1) {
			t.Errorf("read-only transaction at t1 read %v, %v", snap.Data(), err)
		}
		docs, err := tx.Documents(c.Collection("notes")).GetAll()
		if err != nil || len(docs) != 1 || docs[0].Ref.ID != "one" {
			t.Errorf("read-only transaction at t1 queried %d documents, %v", len(docs), err)
		}
		return nil
	}, firestore.ReadOnly, firestore.TransactionReadTime(t1))
	if err != nil {
		t.Fatal(err)
	}

	// Without a read time, a read-only transaction reads the state it began in.
	other := c.Doc("notes/two")
	err = c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		if _, err := tx.Get(other); err != nil {
			return err
		}
		if _, err := other.Set(ctx, map[string]any{"v": 10}); err != nil {
			return err
		}
		snap, err := tx.Get(other)
		if err != nil || snap.Data()["v"] != int64(9) {
			t.Errorf("read-only transaction saw %v, %v after a later write; want v 9", snap.Data(), err)
		}
		return nil
	}, firestore.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}

	_, err = c.Doc("notes/one").WithReadOptions(firestore.ReadTime(time.Now().Add(-2 * time.Hour))).Get(ctx)
	wantCode(t, err, codes.FailedPrecondition, "The requested snapshot version is too old.")
	_, err = c.Collection("notes").WithReadOptions(firestore.ReadTime(time.Now().Add(time.Hour))).Documents(ctx).GetAll()
	wantCode(t, err, codes.InvalidArgument, "read_time cannot be in the future")
}

// TestQuery_RefusesOperatorCombinationsProductionRefuses: two array-contains
// in one disjunct (array-contains-any counts as one), two negations, and
// not-in beside in, array-contains-any or an or are INVALID_ARGUMENT with
// the official emulator's words (the SDKs refuse them before sending).
func TestQuery_RefusesOperatorCombinationsProductionRefuses(t *testing.T) {
	_, c := start(t)
	coll := c.Collection("combos")
	if _, err := coll.Doc("a").Set(context.Background(), map[string]any{"tags": []any{"x"}, "n": 1}); err != nil {
		t.Fatal(err)
	}
	pf := func(path, op string, v any) firestore.PropertyFilter {
		return firestore.PropertyFilter{Path: path, Operator: op, Value: v}
	}
	for _, tc := range []struct {
		name string
		q    firestore.Query
		msg  string
	}{
		{"array-contains twice", coll.Where("tags", "array-contains", "x").Where("other", "array-contains", 1),
			"A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction."},
		{"array-contains beside array-contains-any", coll.Where("tags", "array-contains", "x").Where("other", "array-contains-any", []any{1}),
			"A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction."},
		{"two negations", coll.Where("n", "!=", 2).Where("m", "not-in", []any{1}),
			"Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query."},
		{"not-in beside in", coll.Where("n", "not-in", []any{2}).Where("m", "in", []any{1}),
			"'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."},
		{"not-in in an or", coll.WhereEntity(firestore.OrFilter{Filters: []firestore.EntityFilter{pf("n", "not-in", []any{2}), pf("m", "==", 1)}}),
			"'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.q.Documents(context.Background()).GetAll()
			wantCode(t, err, codes.InvalidArgument, tc.msg)
		})
	}
	// An array-contains in each branch of an or is one per disjunct.
	q := coll.WhereEntity(firestore.OrFilter{Filters: []firestore.EntityFilter{pf("tags", "array-contains", "x"), pf("other", "array-contains", 1)}})
	if docs, err := q.Documents(context.Background()).GetAll(); err != nil || len(docs) != 1 {
		t.Errorf("or of two array-contains: %d documents, %v; want 1", len(docs), err)
	}
}
