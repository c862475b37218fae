package firestore

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/genproto/googleapis/type/latlng"
)

// TestMessages_AsProduction: the INVALID_ARGUMENT messages whose
// production wording the SDKs' tests or production's answers quoted in
// public projects show, word for word (want is the whole message) or in
// the part they quote (contains). Each row names where the wording comes
// from.
func TestMessages_AsProduction(t *testing.T) {
	ctx := context.Background()
	e, _ := Open(Options{})
	defer e.Close()
	const docs = ixDB + "/documents"
	set := func(name string, fields map[string]*pb.Value) *pb.Write {
		return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: docs + "/" + name, Fields: fields}}}
	}
	str := func(s string) *pb.Value { return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: s}} }
	field := func(path string) *pb.StructuredQuery_FieldReference {
		return &pb.StructuredQuery_FieldReference{FieldPath: path}
	}
	filter := func(path string, op pb.StructuredQuery_FieldFilter_Operator, v *pb.Value) *pb.StructuredQuery_Filter {
		return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{Field: field(path), Op: op, Value: v}}}
	}
	and := func(fs ...*pb.StructuredQuery_Filter) *pb.StructuredQuery_Filter {
		return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_CompositeFilter{CompositeFilter: &pb.StructuredQuery_CompositeFilter{Op: pb.StructuredQuery_CompositeFilter_AND, Filters: fs}}}
	}
	from := []*pb.StructuredQuery_CollectionSelector{{CollectionId: "c"}}
	query := func(q *pb.StructuredQuery) func() error {
		return func() error {
			q.From = from
			_, _, err := e.RunQuery(ctx, identity.Owner, docs, q, Consistency{})
			return err
		}
	}
	arr := func(vs ...*pb.Value) *pb.Value {
		return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: vs}}}
	}
	mapOf := func(k string, v *pb.Value) *pb.Value {
		return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{k: v}}}}
	}
	ref := &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: docs + "/c/doc1"}}
	values := func(n int) *pb.Value {
		a := &pb.ArrayValue{}
		for i := range n {
			a.Values = append(a.Values, &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i)}})
		}
		return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: a}}
	}
	readOnly, err := e.BeginTransaction(ixDB, &pb.TransactionOptions{Mode: &pb.TransactionOptions_ReadOnly_{ReadOnly: &pb.TransactionOptions_ReadOnly{}}})
	if err != nil {
		t.Fatal(err)
	}
	var many []*pb.Write
	for range 501 {
		many = append(many, set("c/d", nil))
	}
	var sixAggregations []*pb.StructuredAggregationQuery_Aggregation
	for range 6 {
		sixAggregations = append(sixAggregations, &pb.StructuredAggregationQuery_Aggregation{Operator: &pb.StructuredAggregationQuery_Aggregation_Count_{Count: &pb.StructuredAggregationQuery_Aggregation_Count{}}})
	}
	for _, tc := range []struct {
		name, source   string
		call           func() error
		want, contains string
	}{
		{"more than 500 writes", "Node Admin SDK system tests", func() error {
			_, err := e.Commit(ctx, identity.Owner, ixDB, many, nil)
			return err
		}, "maximum 500 writes allowed per request", ""},
		{"a document over 1 MiB", "production answers quoted in public projects", func() error {
			half := str(strings.Repeat("x", 1<<19))
			_, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{set("c/big", map[string]*pb.Value{"s": half, "t": half})}, nil)
			return err
		}, "Document '" + docs + "/c/big' cannot be written because its size (1,048,636 bytes) exceeds the maximum allowed size of 1,048,576 bytes.", ""},
		{"a string field value over 1,048,487 bytes in a document under 1 MiB", "production answers quoted in public projects (web SDK error messages compared word for word); Firestore's limits page (1 MiB - 89 bytes)", func() error {
			_, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{set("c/long", map[string]*pb.Value{"content": str(strings.Repeat("x", 1048488))})}, nil)
			return err
		}, `The value of property "content" is longer than 1048487 bytes.`, ""},
		{"a bytes field value over 1,048,487 bytes", "the string wording (same limit for any field value)", func() error {
			_, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{set("c/long", map[string]*pb.Value{"blob": {ValueType: &pb.Value_BytesValue{BytesValue: make([]byte, 1048488)}}})}, nil)
			return err
		}, `The value of property "blob" is longer than 1048487 bytes.`, ""},
		{"an array directly inside an array", "production answers quoted in public projects (Node Admin SDK commits)", func() error {
			_, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{set("c/d", map[string]*pb.Value{"facts": arr(arr(str("x")))})}, nil)
			return err
		}, "Property facts contains an invalid nested entity.", ""},
		{"an array inside an array in a map: the top-level property is named", "production answer quoted in a public project (routeSnapshot.path = [[lng, lat], …])", func() error {
			_, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{set("c/d", map[string]*pb.Value{"routeSnapshot": mapOf("path", arr(arr(str("x"))))})}, nil)
			return err
		}, "Property routeSnapshot contains an invalid nested entity.", ""},
		{"an array inside an array in a map in an array", "production answers quoted in two public projects (boxes[].rows = [[…]])", func() error {
			_, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{set("c/d", map[string]*pb.Value{"boxes": arr(mapOf("rows", arr(arr(str("x")))))})}, nil)
			return err
		}, "Property array contains an invalid nested entity.", ""},
		{"an array added to an array by arrayUnion", "the same refusal: the stored value would hold an array inside an array", func() error {
			_, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{{Operation: &pb.Write_Transform{Transform: &pb.DocumentTransform{Document: docs + "/c/d", FieldTransforms: []*pb.DocumentTransform_FieldTransform{{FieldPath: "tags", TransformType: &pb.DocumentTransform_FieldTransform_AppendMissingElements{AppendMissingElements: &pb.ArrayValue{Values: []*pb.Value{arr(str("x"))}}}}}}}}}, nil)
			return err
		}, "Property tags contains an invalid nested entity.", ""},
		{"a write in a read-only transaction", "production answers quoted in public projects", func() error {
			_, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{set("c/d", nil)}, readOnly)
			return err
		}, "Cannot modify entities in a read-only transaction.", ""},
		{"an unknown transaction", "production answers quoted in public projects", func() error {
			_, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{set("c/d", nil)}, []byte("gone"))
			return err
		}, "The referenced transaction has expired or is no longer valid.", ""},
		{"the key ordered before an inequality field", "JS SDK composite_index_query tests", query(&pb.StructuredQuery{
			Where:   filter("key", pb.StructuredQuery_FieldFilter_NOT_EQUAL, str("42")),
			OrderBy: []*pb.StructuredQuery_Order{{Field: field("__name__")}},
		}), "order by clause cannot contain more fields after the key", ""},
		{"a field ordered after the key", "JS SDK composite_index_query tests", query(&pb.StructuredQuery{
			OrderBy: []*pb.StructuredQuery_Order{{Field: field("__name__")}, {Field: field("a")}},
		}), "order by clause cannot contain more fields after the key", ""},
		{"equality on the key with inequalities elsewhere", "JS SDK composite_index_query tests", query(&pb.StructuredQuery{
			Where: and(filter("key", pb.StructuredQuery_FieldFilter_NOT_EQUAL, str("42")), filter("__name__", pb.StructuredQuery_FieldFilter_EQUAL, ref)),
		}), "Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities.", ""},
		{"six aggregations", "Datastore Node client system tests (same backend); Node Admin SDK system tests quote the part \"maximum number of aggregations\"", func() error {
			_, _, err := e.Aggregate(ctx, identity.Owner, docs, &pb.StructuredQuery{From: from}, sixAggregations, Consistency{})
			return err
		}, "The maximum number of aggregations allowed in an aggregation query is 5. Received: 6", ""},
		{"in with 31 values", "production answers quoted in public projects", query(&pb.StructuredQuery{
			Where: filter("a", pb.StructuredQuery_FieldFilter_IN, values(31)),
		}), "'IN' supports up to 30 comparison values.", ""},
		{"array-contains-any with 31 values", "the IN wording, with the operator's name", query(&pb.StructuredQuery{
			Where: filter("a", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY, values(31)),
		}), "'ARRAY_CONTAINS_ANY' supports up to 30 comparison values.", ""},
		{"not-in with 11 values", "production answers quoted in public projects", query(&pb.StructuredQuery{
			Where: filter("a", pb.StructuredQuery_FieldFilter_NOT_IN, values(11)),
		}), "'NOT_IN' supports up to 10 comparison values.", ""},
		{"in with no values", "production answers quoted in public projects", query(&pb.StructuredQuery{
			Where: filter("a", pb.StructuredQuery_FieldFilter_IN, values(0)),
		}), "'IN' requires an non-empty ArrayValue.", ""},
		{"not-in with no values", "production answers quoted in public projects", query(&pb.StructuredQuery{
			Where: filter("a", pb.StructuredQuery_FieldFilter_NOT_IN, values(0)),
		}), "'NOT_IN' requires an non-empty ArrayValue.", ""},
		{"a cursor longer than the order", "JS SDK issue 8241 (the server's answer to a count with a cursor)", query(&pb.StructuredQuery{
			OrderBy: []*pb.StructuredQuery_Order{{Field: field("a")}},
			StartAt: &pb.Cursor{Values: []*pb.Value{str("x"), ref, str("y")}},
		}), "Cursor has too many values.", ""},
		{"a write named by its URL", "production answers quoted in public projects (REST writes)", func() error {
			_, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{Name: "https://firestore.googleapis.com/v1/" + docs + "/c/d"}}}}, nil)
			return err
		}, `Document name "https://firestore.googleapis.com/v1/` + docs + `/c/d" lacks "projects" at index 0`, ""},
		{"a field path that does not parse", "production answers quoted in public issues (Python and Dart clients)", query(&pb.StructuredQuery{
			Where: filter("24_hours", pb.StructuredQuery_FieldFilter_EQUAL, str("x")),
		}), `Invalid property path "24_hours".`, ""},
		{"a rollback of an unknown transaction", "production answers quoted in public projects", func() error {
			return e.Rollback(ixDB, []byte("gone"))
		}, "Invalid transaction.", ""},
		{"a read in the future", "production answers quoted in public projects", func() error {
			_, _, err := e.RunQuery(ctx, identity.Owner, docs, &pb.StructuredQuery{From: from}, Consistency{ReadTime: time.Now().Add(time.Hour)})
			return err
		}, "read_time cannot be in the future", ""},
		{"a commit over 10 MiB", "Google's front end", func() error {
			var big []*pb.Write
			for i := range 11 {
				big = append(big, set("c/b"+string(rune('a'+i)), map[string]*pb.Value{"s": str(strings.Repeat("x", 1000*1000))}))
			}
			_, err := e.Commit(ctx, identity.Owner, ixDB, big, nil)
			return err
		}, "Request payload size exceeds the limit: 10485760 bytes.", ""},
		{"a reserved document id", "production answers quoted in public projects", func() error {
			_, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{set("c/__x__", nil)}, nil)
			return err
		}, `Resource id "__x__" is invalid because it is reserved.`, ""},
		{"a geo point off the globe", "loupe's own wording: production's is not public", func() error {
			_, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{set("c/g", map[string]*pb.Value{"g": {ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{Latitude: 90.5}}}})}, nil)
			return err
		}, "", "invalid geo point"},
	} {
		err := tc.call()
		if errs.KindOf(err) != errs.InvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", tc.name, err)
			continue
		}
		if tc.want != "" && err.Error() != tc.want || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("%s: %q, want %q%s (wording from %s)", tc.name, err.Error(), tc.want, tc.contains, tc.source)
		}
	}
}

// TestDurabilityError_NamesNoFile: the error a writer sees when the data
// dir fails keeps the cause (which names the log's file) out of its message.
func TestDurabilityError_NamesNoFile(t *testing.T) {
	for _, cause := range []error{syscall.ENOSPC, syscall.EIO} {
		err := durabilityError(&fs.PathError{Op: "write", Path: "/srv/loupe/data/firestore/commits.log", Err: cause})
		if strings.Contains(err.Error(), "/srv") || !errors.Is(err, cause) {
			t.Errorf("%v: %q", cause, err)
		}
	}
}
