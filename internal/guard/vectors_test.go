package guard_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// vectorValue is a vector as the SDKs send it.
func vectorValue(elems ...float64) *pb.Value {
	arr := &pb.ArrayValue{}
	for _, e := range elems {
		arr.Values = append(arr.Values, &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: e}})
	}
	return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{
		"__type__": {ValueType: &pb.Value_StringValue{StringValue: "__vector__"}},
		"value":    {ValueType: &pb.Value_ArrayValue{ArrayValue: arr}},
	}}}}
}

func itemWrite(id, name string, embedding *pb.Value) *pb.Write {
	return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{
		Name: db + "/documents/items/" + id,
		Fields: map[string]*pb.Value{
			"name":      {ValueType: &pb.Value_StringValue{StringValue: name}},
			"embedding": embedding,
		},
	}}}
}

// TestGuard_RulesSeeVectors: rules (testdata/vector.rules) judge a
// document's vector field (type tests, its elements, equality, diff) the
// same over gRPC and REST.
func TestGuard_RulesSeeVectors(t *testing.T) {
	rules, _ := filepath.Abs("testdata/vector.rules")
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: loupetest.Rules(t, rules, "")})
	conn, err := grpc.NewClient(inst.Host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewFirestoreClient(conn)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+loupetest.MockToken("alice"))
	del := func(id string) *pb.Write {
		return &pb.Write{Operation: &pb.Write_Delete{Delete: db + "/documents/items/" + id}}
	}
	for _, tc := range []struct {
		name  string
		write *pb.Write
		want  codes.Code
	}{
		{"create with a 3-dimensional vector", itemWrite("a", "first", vectorValue(1, 2, 3)), codes.OK},
		{"create with a 2-dimensional vector", itemWrite("b", "first", vectorValue(1, 2)), codes.PermissionDenied},
		{"create with a list in place of the vector", itemWrite("c", "first", &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: vectorValue(1, 2, 3).GetMapValue().Fields["value"].GetArrayValue()}}), codes.PermissionDenied},
		{"update the name beside an unchanged vector", itemWrite("a", "renamed", vectorValue(1, 2, 3)), codes.OK},
		{"update the vector", itemWrite("a", "renamed", vectorValue(1, 2, 4)), codes.PermissionDenied},
		{"delete: the vector is no list, its value is", del("a"), codes.OK},
	} {
		_, err := client.Commit(ctx, &pb.CommitRequest{Database: db, Writes: []*pb.Write{tc.write}})
		if status.Code(err) != tc.want {
			t.Errorf("gRPC: %s: %v, want %s", tc.name, err, tc.want)
		}
	}

	rest := func(id, name, elems string) int {
		t.Helper()
		var body string
		code, err := loupetest.RESTCommit(context.Background(), inst.URL, db, loupetest.MockToken("alice"),
			`{"writes":[{"update":{"name":"`+db+`/documents/items/`+id+`","fields":{"name":{"stringValue":"`+name+`"},`+
				`"embedding":{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[`+elems+`]}}}}}}}}]}`, &body)
		if err != nil {
			t.Fatal(err)
		}
		if code != 200 && !strings.Contains(body, "PERMISSION_DENIED") {
			t.Errorf("REST %s: %d %s", id, code, body)
		}
		return code
	}
	three := `{"doubleValue":1},{"doubleValue":2},{"doubleValue":3}`
	if code := rest("r", "first", three); code != 200 {
		t.Errorf("REST create with a 3-dimensional vector: %d", code)
	}
	if code := rest("r", "renamed", three); code != 200 {
		t.Errorf("REST rename beside an unchanged vector: %d", code)
	}
	if code := rest("r", "renamed", `{"doubleValue":1},{"doubleValue":2},{"doubleValue":4}`); code != 403 {
		t.Errorf("REST change of the vector: %d, want 403", code)
	}
}
