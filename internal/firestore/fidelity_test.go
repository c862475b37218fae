package firestore_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	apiv1 "cloud.google.com/go/firestore/apiv1"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
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

// rawClient is the Go SDK's generated client (the layer under
// firestore.Client), for what the high-level API hides: how many messages
// a stream carries, PartitionQuery's pages.
func rawClient(t *testing.T, inst *loupetest.Instance) *apiv1.Client {
	t.Helper()
	c, err := apiv1.NewClient(context.Background(), option.WithEndpoint(inst.Host), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestFidelity_ExplainAnalyzeStreamsMetricsWithTheLastResult: with analyze,
// the explain metrics ride on the response that carries the last result,
// over gRPC and REST; a query with no result answers one message.
func TestFidelity_ExplainAnalyzeStreamsMetricsWithTheLastResult(t *testing.T) {
	ctx := context.Background()
	inst, c := start(t)
	seed(t, c, "explained", map[string]map[string]any{"a": {"n": 1}, "b": {"n": 2}})
	raw := rawClient(t, inst)
	const parent = "projects/" + project + "/databases/(default)/documents"
	for _, tc := range []struct {
		where string
		docs  int
	}{{`{"fieldFilter":{"field":{"fieldPath":"n"},"op":"GREATER_THAN","value":{"integerValue":"0"}}}`, 2}, {`{"fieldFilter":{"field":{"fieldPath":"n"},"op":"GREATER_THAN","value":{"integerValue":"5"}}}`, 0}} {
		body := `{"structuredQuery":{"from":[{"collectionId":"explained"}],"where":` + tc.where + `},"explainOptions":{"analyze":true}}`
		req := &firestorepb.RunQueryRequest{}
		if err := protojson.Unmarshal([]byte(body), req); err != nil {
			t.Fatal(err)
		}
		req.Parent = parent
		stream, err := raw.RunQuery(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var grpcMsgs []*firestorepb.RunQueryResponse
		for {
			resp, err := stream.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			grpcMsgs = append(grpcMsgs, resp)
		}
		var restMsgs []map[string]any
		code, err := loupetest.PostJSON(ctx, inst.URL+"/v1/"+parent+":runQuery", "owner", body, &restMsgs)
		if err != nil || code != 200 {
			t.Fatalf("REST runQuery: %d %v", code, err)
		}
		want := max(tc.docs, 1)
		if len(grpcMsgs) != want || len(restMsgs) != want {
			t.Fatalf("%d results: %d gRPC and %d REST messages, want %d", tc.docs, len(grpcMsgs), len(restMsgs), want)
		}
		for i := range want {
			last := i == want-1
			if got := grpcMsgs[i].GetExplainMetrics().GetExecutionStats() != nil; got != last {
				t.Errorf("%d results: gRPC message %d carries metrics: %v", tc.docs, i, got)
			}
			if _, got := restMsgs[i]["explainMetrics"]; got != last {
				t.Errorf("%d results: REST message %d carries metrics: %v", tc.docs, i, got)
			}
			if (grpcMsgs[i].GetDocument() != nil) != (tc.docs > 0) || grpcMsgs[i].GetReadTime() == nil {
				t.Errorf("%d results: gRPC message %d: %v", tc.docs, i, grpcMsgs[i])
			}
		}
	}
	// The Go SDK reads the documents and the metrics from that stream.
	it := c.Collection("explained").WithRunOptions(firestore.ExplainOptions{Analyze: true}).Documents(ctx)
	docs, err := it.GetAll()
	if err != nil || len(docs) != 2 {
		t.Fatalf("SDK explain: %v %v", docs, err)
	}
	if m, err := it.ExplainMetrics(); err != nil || m.ExecutionStats == nil || m.ExecutionStats.ResultsReturned != 2 {
		t.Errorf("SDK explain metrics: %+v %v", m, err)
	}
}

// TestFidelity_PartitionQuerySplitsACollectionGroup partitions a
// collection group of 2×128+127 documents (the SDKs' system tests' size:
// production's partitions hold at least 128, but the last): into the three
// asked for,
// whose queries read every document of the group once; over pages of one
// split point too.
func TestFidelity_PartitionQuerySplitsACollectionGroup(t *testing.T) {
	ctx := context.Background()
	inst, c := start(t)
	const total = 2*128 + 127
	//lint:ignore SA1019 a WriteBatch seeds the group in one commit
	batch := c.Batch()
	for i := range total {
		parent := []string{"", "users/u1/", "users/u2/", "shops/s/users/u3/"}[i%4]
		batch.Set(c.Doc(fmt.Sprintf("%sparts/p%03d", parent, i)), map[string]any{"i": i})
	}
	batch.Set(c.Doc("other/x"), map[string]any{"i": -1})
	batch.Set(c.Doc("parts/x/notparts/y"), map[string]any{"i": -1})
	if _, err := batch.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	queries, err := c.CollectionGroup("parts").GetPartitionedQueries(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) != 3 {
		t.Fatalf("%d partitions, want 3", len(queries))
	}
	seen := map[string]int{}
	for i, q := range queries {
		docs, err := q.Documents(ctx).GetAll()
		if err != nil {
			t.Fatal(err)
		}
		if i < len(queries)-1 && len(docs) < 128 {
			t.Errorf("partition %d holds %d documents, fewer than 128", i, len(docs))
		}
		for _, d := range docs {
			seen[d.Ref.Path]++
		}
	}
	if len(seen) != total {
		t.Errorf("the partitions read %d documents, want %d", len(seen), total)
	}
	for path, n := range seen {
		if n != 1 {
			t.Errorf("%s read %d times", path, n)
		}
	}
	if one, err := c.CollectionGroup("parts").GetPartitionedQueries(ctx, 1); err != nil || len(one) != 1 {
		t.Errorf("one partition: %d %v", len(one), err)
	}
	if none, err := c.CollectionGroup("absent").GetPartitionedQueries(ctx, 3); err != nil || len(none) != 1 {
		t.Errorf("an empty group: %d partitions %v, want 1", len(none), err)
	}

	// Page by page, the split points come in order.
	raw := rawClient(t, inst)
	req := &firestorepb.PartitionQueryRequest{
		Parent:         "projects/" + project + "/databases/(default)/documents",
		PartitionCount: 2,
		PageSize:       1,
		QueryType: &firestorepb.PartitionQueryRequest_StructuredQuery{StructuredQuery: &firestorepb.StructuredQuery{
			From:    []*firestorepb.StructuredQuery_CollectionSelector{{CollectionId: "parts", AllDescendants: true}},
			OrderBy: []*firestorepb.StructuredQuery_Order{{Field: &firestorepb.StructuredQuery_FieldReference{FieldPath: "__name__"}, Direction: firestorepb.StructuredQuery_ASCENDING}},
		}},
	}
	var points []string
	for it := raw.PartitionQuery(ctx, req); ; {
		cur, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		points = append(points, cur.GetValues()[0].GetReferenceValue())
	}
	if len(points) != 2 || points[0] >= points[1] {
		t.Errorf("paged split points %v, want two in order", points)
	}
	req.GetStructuredQuery().Where = &firestorepb.StructuredQuery_Filter{FilterType: &firestorepb.StructuredQuery_Filter_UnaryFilter{UnaryFilter: &firestorepb.StructuredQuery_UnaryFilter{
		Op: firestorepb.StructuredQuery_UnaryFilter_IS_NULL, OperandType: &firestorepb.StructuredQuery_UnaryFilter_Field{Field: &firestorepb.StructuredQuery_FieldReference{FieldPath: "i"}}}}}
	_, err = raw.PartitionQuery(ctx, req).Next()
	wantCode(t, err, codes.InvalidArgument, "filters")
}

// TestFidelity_MissingOptionalFilesWarn names files firebase.json may name
// before they exist (firestore.indexes.json, rules, the hosting folder,
// the database rules, a remote config template): loupe starts, as
// firebase-tools does, warning about the files it reads, and Firestore
// serves the Go SDK.
func TestFidelity_MissingOptionalFilesWarn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "firebase.json")
	if err := os.WriteFile(cfg, []byte(`{
		"firestore": {"rules": "firestore.rules", "indexes": "firestore.indexes.json"},
		"storage": {"rules": "storage.rules"},
		"hosting": {"public": "dist"},
		"database": {"rules": "database.rules.json"},
		"remoteconfig": {"template": "remoteconfig.template.json"}
	}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: cfg})
	c := newClient(t, inst)
	if _, err := c.Doc("files/a").Set(ctx, map[string]any{"ok": true}); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, c.Collection("files").Where("ok", "==", true)); got != "a" {
		t.Errorf("query: %q", got)
	}
	for _, want := range []string{"Firestore indexes file named in firebase.json does not exist", "Hosting public folder named in firebase.json does not exist", "Firestore rules file", "Storage rules file"} {
		if !strings.Contains(inst.Log(), want) {
			t.Errorf("no warning %q in the log:\n%s", want, inst.Log())
		}
	}
}

// TestFidelity_ProductionLimits writes past production's limits through
// the Go SDK (gRPC) and REST: field names over 1,500 bytes, more than
// 20,000 fields, a commit over 10 MiB, geo points off the globe and
// references that name no document are refused with INVALID_ARGUMENT, and
// nothing is written.
func TestFidelity_ProductionLimits(t *testing.T) {
	ctx := context.Background()
	inst, c := start(t)
	many := map[string]any{}
	for i := range 20001 {
		many[fmt.Sprint("f", i)] = i
	}
	chunk := strings.Repeat("x", 1000*1000)
	for _, tc := range []struct {
		name  string
		write func() error
		want  string
	}{
		{"a field name over 1,500 bytes", func() error {
			_, err := c.Doc("limits/name").Set(ctx, map[string]any{strings.Repeat("n", 1501): 1})
			return err
		}, "longer than 1,500 bytes"},
		{"20,001 fields", func() error {
			_, err := c.Doc("limits/fields").Set(ctx, many)
			return err
		}, "20,001 fields, more than the maximum of 20,000"},
		{"nested fields count too", func() error {
			_, err := c.Doc("limits/nested").Set(ctx, map[string]any{"m": many})
			return err
		}, "more than the maximum of 20,000"},
		{"a commit over 10 MiB", func() error {
			//lint:ignore SA1019 a WriteBatch is one commit
			b := c.Batch()
			for i := range 11 {
				b.Set(c.Doc(fmt.Sprint("limits/big", i)), map[string]any{"s": chunk})
			}
			_, err := b.Commit(ctx)
			return err
		}, "Request payload size exceeds the limit: 10485760 bytes."},
		{"latitude 91", func() error {
			_, err := c.Doc("limits/geo").Set(ctx, map[string]any{"at": &latlng.LatLng{Latitude: 91}})
			return err
		}, "invalid geo point"},
		{"longitude -180.5 in an array", func() error {
			_, err := c.Doc("limits/geo").Set(ctx, map[string]any{"at": []any{&latlng.LatLng{Longitude: -180.5}}})
			return err
		}, "invalid geo point"},
		{"a reference that names no document", func() error {
			_, err := rawClient(t, inst).Commit(ctx, &firestorepb.CommitRequest{
				Database: "projects/" + project + "/databases/(default)",
				Writes: []*firestorepb.Write{{Operation: &firestorepb.Write_Update{Update: &firestorepb.Document{
					Name:   "projects/" + project + "/databases/(default)/documents/limits/ref",
					Fields: map[string]*firestorepb.Value{"r": {ValueType: &firestorepb.Value_ReferenceValue{ReferenceValue: "limits/ref"}}},
				}}}},
			})
			return err
		}, "invalid reference"},
	} {
		wantCode(t, tc.write(), codes.InvalidArgument, tc.want)
	}
	if docs, err := c.Collection("limits").Documents(ctx).GetAll(); err != nil || len(docs) != 0 {
		t.Errorf("written past the limits: %d documents %v", len(docs), err)
	}
	// REST answers the same.
	const db = "projects/" + project + "/databases/(default)"
	var out map[string]any
	code, err := loupetest.RESTCommit(ctx, inst.URL, db, "owner", `{"writes":[{"update":{"name":"`+db+`/documents/limits/r","fields":{"at":{"geoPointValue":{"latitude":-90.5,"longitude":0}}}}}]}`, &out)
	if err != nil || code != 400 || !strings.Contains(fmt.Sprint(out), "invalid geo point") {
		t.Errorf("REST geo point: %d %v %v", code, out, err)
	}
	noServerPath(t, fmt.Sprint(out))
}

// TestFidelity_ErrorsNameNoServerPath provokes the errors whose cause names
// a file of the server's: a commit the data dir cannot take, a rules or
// indexes file that does not parse (the server's log names it, the client
// does not see it), a malformed request; every message a client sees is
// checked by noServerPath (wantCode does it for every suite).
func TestFidelity_ErrorsNameNoServerPath(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rules := filepath.Join(dir, "firestore.rules")
	if err := os.WriteFile(rules, []byte("rules_version = '2';\nservice cloud.firestore {\n match /databases/{db}/documents {\n match /{d=**} { allow read: if true; }\n }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{Config: loupetest.Rules(t, rules, "")})
	c := newClient(t, inst)
	// A client (not the owner) is refused by the rules: the message names the rule, not the file.
	tokenClient := func() error {
		var out map[string]any
		code, err := loupetest.RESTCommit(ctx, inst.URL, "projects/"+project+"/databases/(default)", loupetest.MockToken("alice"),
			`{"writes":[{"update":{"name":"projects/`+project+`/databases/(default)/documents/x/y","fields":{}}}]}`, &out)
		if err == nil && code != 403 {
			t.Errorf("write the rules refuse: %d %v", code, out)
		}
		noServerPath(t, fmt.Sprint(out))
		return err
	}
	if err := tokenClient(); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"writes":[{"update":{"name":"../../etc/passwd"}}]}`, `{"writes":`, `{"writes":[{"update":{"name":"projects/` + project + `/databases/(default)/documents/` + dir + `/x"}}]}`} {
		var out map[string]any
		if _, err := loupetest.RESTCommit(ctx, inst.URL, "projects/"+project+"/databases/(default)", "owner", body, &out); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(body, dir) {
			continue // the client named that path itself
		}
		noServerPath(t, fmt.Sprint(out))
	}
	_, err := c.Doc("a/b").Update(ctx, []firestore.Update{{Path: "x", Value: 1}})
	wantCode(t, err, codes.NotFound, "No document to update")
}
