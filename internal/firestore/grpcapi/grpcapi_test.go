package grpcapi_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"cloud.google.com/go/firestore"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	engine "github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/firestore/grpcapi"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const (
	project = "demo-grpcapi"
	docs    = "projects/" + project + "/databases/(default)/documents"
)

// serve serves a fresh in-memory engine over gRPC on a loopback port, as
// loupe serves it, and returns its address.
func serve(t *testing.T) string {
	t.Helper()
	e, err := engine.Open(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(server.Codec())
	grpcapi.Register(s, e, identity.Local)
	go s.Serve(lis)
	t.Cleanup(func() {
		s.Stop()
		e.Close()
	})
	return lis.Addr().String()
}

// raw is a google.firestore.v1 client that calls as authorization says
// (the owner credential of the emulators: "Bearer owner").
func raw(t *testing.T, addr, authorization string) (pb.FirestoreClient, context.Context) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewFirestoreClient(conn), metadata.AppendToOutgoingContext(context.Background(), "authorization", authorization)
}

func code(err error) codes.Code { return status.Code(err) }

func intField(n int64) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: n}}
}

// TestDocumentCalls covers the single-document calls no SDK makes but the
// REST-shaped clients of the gRPC API do: create (with and without an id),
// get (with a mask, missing), update with a mask and a precondition,
// delete, and the listings.
func TestDocumentCalls(t *testing.T) {
	c, ctx := raw(t, serve(t), "Bearer owner")

	created, err := c.CreateDocument(ctx, &pb.CreateDocumentRequest{Parent: docs, CollectionId: "items", DocumentId: "a",
		Document: &pb.Document{Fields: map[string]*pb.Value{"n": intField(1), "m": intField(10)}}})
	if err != nil {
		t.Fatalf("create items/a: %v", err)
	}
	if created.GetName() != docs+"/items/a" || created.GetCreateTime() == nil || created.GetFields()["n"].GetIntegerValue() != 1 {
		t.Errorf("create answered %v, want items/a with n = 1 and a create time", created)
	}
	if _, err := c.CreateDocument(ctx, &pb.CreateDocumentRequest{Parent: docs, CollectionId: "items", DocumentId: "a", Document: &pb.Document{}}); code(err) != codes.AlreadyExists {
		t.Errorf("create of an existing document: %v, want ALREADY_EXISTS", err)
	}
	generated, err := c.CreateDocument(ctx, &pb.CreateDocumentRequest{Parent: docs, CollectionId: "items", Document: &pb.Document{}})
	if err != nil {
		t.Fatal(err)
	}
	if id := generated.GetName()[len(docs+"/items/"):]; len(id) != 20 {
		t.Errorf("a create without an id named the document %q, want a 20-character id", id)
	}

	got, err := c.GetDocument(ctx, &pb.GetDocumentRequest{Name: docs + "/items/a", Mask: &pb.DocumentMask{FieldPaths: []string{"m"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.GetFields()["n"]; ok || got.GetFields()["m"].GetIntegerValue() != 10 {
		t.Errorf("get with mask [m] = %v, want only m", got.GetFields())
	}
	if _, err := c.GetDocument(ctx, &pb.GetDocumentRequest{Name: docs + "/items/nope"}); code(err) != codes.NotFound {
		t.Errorf("get of a missing document: %v, want NOT_FOUND", err)
	}

	updated, err := c.UpdateDocument(ctx, &pb.UpdateDocumentRequest{
		Document:   &pb.Document{Name: docs + "/items/a", Fields: map[string]*pb.Value{"m": intField(11), "n": intField(99)}},
		UpdateMask: &pb.DocumentMask{FieldPaths: []string{"m"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if f := updated.GetFields(); f["m"].GetIntegerValue() != 11 || f["n"].GetIntegerValue() != 1 {
		t.Errorf("update with mask [m] left %v, want m = 11 and n untouched at 1", f)
	}
	if _, err := c.UpdateDocument(ctx, &pb.UpdateDocumentRequest{
		Document:        &pb.Document{Name: docs + "/items/missing", Fields: map[string]*pb.Value{"n": intField(1)}},
		CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}},
	}); code(err) != codes.NotFound {
		t.Errorf("update of a missing document that must exist: %v, want NOT_FOUND", err)
	}

	if _, err := c.CreateDocument(ctx, &pb.CreateDocumentRequest{Parent: docs, CollectionId: "items", DocumentId: "b", Document: &pb.Document{}}); err != nil {
		t.Fatal(err)
	}
	first, err := c.ListDocuments(ctx, &pb.ListDocumentsRequest{Parent: docs, CollectionId: "items", PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.GetDocuments()) != 2 || first.GetNextPageToken() == "" {
		t.Fatalf("first page of 2 of 3 documents: %d documents, next page token %q", len(first.GetDocuments()), first.GetNextPageToken())
	}
	rest, err := c.ListDocuments(ctx, &pb.ListDocumentsRequest{Parent: docs, CollectionId: "items", PageSize: 2, PageToken: first.GetNextPageToken()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rest.GetDocuments()) != 1 || rest.GetNextPageToken() != "" {
		t.Errorf("last page: %d documents, next page token %q; want 1 and none", len(rest.GetDocuments()), rest.GetNextPageToken())
	}
	ids, err := c.ListCollectionIds(ctx, &pb.ListCollectionIdsRequest{Parent: docs})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids.GetCollectionIds()) != 1 || ids.GetCollectionIds()[0] != "items" {
		t.Errorf("collection ids = %v, want [items]", ids.GetCollectionIds())
	}

	if _, err := c.DeleteDocument(ctx, &pb.DeleteDocumentRequest{Name: docs + "/items/a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetDocument(ctx, &pb.GetDocumentRequest{Name: docs + "/items/a"}); code(err) != codes.NotFound {
		t.Errorf("get after delete: %v, want NOT_FOUND", err)
	}
	if _, err := c.DeleteDocument(ctx, &pb.DeleteDocumentRequest{Name: docs + "/items/a",
		CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}}}); code(err) != codes.NotFound {
		t.Errorf("delete of a missing document that must exist: %v, want NOT_FOUND", err)
	}
}

// TestCallerMustBeBelieved refuses a credential that is neither the owner's
// nor an ID token, on unary and streaming calls alike, as UNAUTHENTICATED.
func TestCallerMustBeBelieved(t *testing.T) {
	c, ctx := raw(t, serve(t), "Bearer not-a-token")
	if _, err := c.GetDocument(ctx, &pb.GetDocumentRequest{Name: docs + "/items/a"}); code(err) != codes.Unauthenticated {
		t.Errorf("get with a bad token: %v, want UNAUTHENTICATED", err)
	}
	if _, err := c.ListCollectionIds(ctx, &pb.ListCollectionIdsRequest{Parent: docs}); code(err) != codes.Unauthenticated {
		t.Errorf("listCollectionIds with a bad token: %v, want UNAUTHENTICATED", err)
	}
	stream, err := c.RunQuery(ctx, &pb.RunQueryRequest{Parent: docs})
	if err == nil {
		_, err = stream.Recv()
	}
	if code(err) != codes.Unauthenticated {
		t.Errorf("runQuery with a bad token: %v, want UNAUTHENTICATED", err)
	}
}

// TestStreamsAnswerHeadersBeforeAnError: a server-streaming call that is
// refused sends its response headers before the error, never the error
// alone (trailers-only), which the Node.js SDKs retry as a lost connection.
func TestStreamsAnswerHeadersBeforeAnError(t *testing.T) {
	c, ctx := raw(t, serve(t), "Bearer owner")
	tooMany := make([]*pb.Value, 31)
	for i := range tooMany {
		tooMany[i] = intField(int64(i))
	}
	badQuery := &pb.StructuredQuery{
		From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "items"}},
		Where: &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
			Field: &pb.StructuredQuery_FieldReference{FieldPath: "n"}, Op: pb.StructuredQuery_FieldFilter_IN,
			Value: &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: tooMany}}}}}},
	}
	type headered interface {
		Header() (metadata.MD, error)
	}
	for name, open := range map[string]func() (headered, func() error, error){
		"runQuery": func() (headered, func() error, error) {
			s, err := c.RunQuery(ctx, &pb.RunQueryRequest{Parent: docs, QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: badQuery}})
			return s, func() error { _, err := s.Recv(); return err }, err
		},
		"runAggregationQuery": func() (headered, func() error, error) {
			s, err := c.RunAggregationQuery(ctx, &pb.RunAggregationQueryRequest{Parent: docs})
			return s, func() error { _, err := s.Recv(); return err }, err
		},
		"batchGetDocuments": func() (headered, func() error, error) {
			s, err := c.BatchGetDocuments(ctx, &pb.BatchGetDocumentsRequest{Database: "projects/" + project + "/databases/(default)", Documents: []string{"not/a/name"}})
			return s, func() error { _, err := s.Recv(); return err }, err
		},
		"executePipeline": func() (headered, func() error, error) {
			s, err := c.ExecutePipeline(ctx, &pb.ExecutePipelineRequest{Database: "projects/" + project + "/databases/(default)"})
			return s, func() error { _, err := s.Recv(); return err }, err
		},
	} {
		stream, recv, err := open()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		md, err := stream.Header()
		if err != nil || md == nil {
			t.Errorf("%s: headers %v %v, want them before the error", name, md, err)
		}
		if err := recv(); code(err) == codes.OK {
			t.Errorf("%s: %v, want an error", name, err)
		}
	}
}

// TestGoSDK drives the streaming and transactional calls the way the Go
// SDK makes them: commits and batch gets, a query, aggregations, a
// transaction that commits and one that rolls back, BulkWriter's batch
// writes, partitions, explain and a snapshot listener.
func TestGoSDK(t *testing.T) {
	t.Setenv("FIRESTORE_EMULATOR_HOST", serve(t))
	ctx := context.Background()
	client, err := firestore.NewClient(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	items := client.Collection("items")

	bw := client.BulkWriter(ctx)
	for i := range 10 {
		if _, err := bw.Set(items.Doc(string(rune('a'+i))), map[string]any{"n": i, "even": i%2 == 0}); err != nil {
			t.Fatal(err)
		}
	}
	bw.End()
	snaps, err := client.GetAll(ctx, []*firestore.DocumentRef{items.Doc("c"), items.Doc("zz")})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := snaps[0].DataAt("n"); n != int64(2) || snaps[1].Exists() {
		t.Errorf("getAll of c and a missing zz: c.n = %v, zz exists %v", n, snaps[1].Exists())
	}

	q := items.Where("even", "==", true).OrderBy("n", firestore.Desc).Limit(3)
	got, err := q.Documents(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	var ns []int64
	for _, s := range got {
		n, _ := s.DataAt("n")
		ns = append(ns, n.(int64))
	}
	if len(ns) != 3 || ns[0] != 8 || ns[1] != 6 || ns[2] != 4 {
		t.Errorf("even items by n descending, limit 3 = %v, want [8 6 4]", ns)
	}
	evens := items.Where("even", "==", true)
	agg, err := evens.NewAggregationQuery().WithCount("count").WithSum("n", "sum").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if count, sum := agg["count"].(*pb.Value).GetIntegerValue(), agg["sum"].(*pb.Value).GetIntegerValue(); count != 5 || sum != 20 {
		t.Errorf("count and sum of the even items = %d, %d; want 5, 20", count, sum)
	}
	explained := q.WithRunOptions(firestore.ExplainOptions{Analyze: true}).Documents(ctx)
	if _, err := explained.GetAll(); err != nil {
		t.Fatal(err)
	}
	if m, err := explained.ExplainMetrics(); err != nil || m.ExecutionStats == nil || m.ExecutionStats.ResultsReturned != 3 {
		t.Errorf("explain with analyze: %+v, %v; want execution stats of 3 results", m, err)
	}

	counter := client.Doc("counters/c")
	for range 3 {
		if err := client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
			s, err := tx.Get(counter)
			var n int64
			if err == nil {
				v, _ := s.DataAt("n")
				n = v.(int64)
			} else if status.Code(err) != codes.NotFound {
				return err
			}
			return tx.Set(counter, map[string]any{"n": n + 1})
		}); err != nil {
			t.Fatal(err)
		}
	}
	refused := errors.New("refused by the transaction")
	if err := client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		if _, err := tx.Get(counter); err != nil {
			return err
		}
		if err := tx.Set(counter, map[string]any{"n": -1}); err != nil {
			return err
		}
		return refused
	}); !errors.Is(err, refused) {
		t.Errorf("a transaction whose function fails: %v, want its error", err)
	}
	if s, err := counter.Get(ctx); err != nil {
		t.Fatal(err)
	} else if n, _ := s.DataAt("n"); n != int64(3) {
		t.Errorf("counter after three transactions and one rolled back = %v, want 3", n)
	}

	parts, err := client.CollectionGroup("items").GetPartitionedQueries(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, p := range parts {
		docs, err := p.Documents(ctx).GetAll()
		if err != nil {
			t.Fatal(err)
		}
		seen += len(docs)
	}
	if len(parts) == 0 || seen != 10 {
		t.Errorf("%d partitions read %d documents, want at least one partition and all 10 documents", len(parts), seen)
	}

	it := items.Doc("a").Snapshots(ctx)
	defer it.Stop()
	first, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := first.DataAt("n"); n != int64(0) {
		t.Errorf("listener's first snapshot n = %v, want 0", n)
	}
	if _, err := items.Doc("a").Set(ctx, map[string]any{"n": 100}); err != nil {
		t.Fatal(err)
	}
	for {
		s, err := it.Next()
		if err != nil {
			t.Fatalf("listener: %v", err)
		}
		if n, _ := s.DataAt("n"); n == int64(100) {
			break
		}
	}
	if _, err := client.Collections(ctx).Next(); err == iterator.Done {
		t.Error("the root lists no collections")
	}
}
