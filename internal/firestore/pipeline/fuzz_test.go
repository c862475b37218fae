package pipeline

import (
	"context"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/protobuf/proto"
)

const fuzzDB = "projects/p/databases/(default)"

func fn(name string, args ...*pb.Value) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_FunctionValue{FunctionValue: &pb.Function{Name: name, Args: args}}}
}

func fieldRef(f string) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_FieldReferenceValue{FieldReferenceValue: f}}
}

func pstage(name string, args ...*pb.Value) *pb.Pipeline_Stage {
	return &pb.Pipeline_Stage{Name: name, Args: args}
}

// fuzzSeeds are pipelines of every shape the SDKs send.
func fuzzSeeds() []*pb.StructuredPipeline {
	coll := pstage("collection", refV("/c"))
	sortBy := mapV(map[string]*pb.Value{"direction": stringV("ascending"), "expression": fieldRef("a")})
	return []*pb.StructuredPipeline{
		{Pipeline: &pb.Pipeline{Stages: []*pb.Pipeline_Stage{coll,
			pstage("where", fn("and", fn("equal", fieldRef("a"), intV(1)), fn("exists", fieldRef("b")))),
			pstage("sort", sortBy), pstage("offset", intV(1)), pstage("limit", intV(2))}}},
		{Pipeline: &pb.Pipeline{Stages: []*pb.Pipeline_Stage{
			pstage("literals", mapV(map[string]*pb.Value{"a": intV(1), "s": stringV("x y")}), mapV(map[string]*pb.Value{"a": doubleV(2)})),
			pstage("add_fields", mapV(map[string]*pb.Value{"t": fn("string_concat", fieldRef("s"), stringV("!")), "n": fn("add", fieldRef("a"), intV(1))})),
			pstage("aggregate", mapV(map[string]*pb.Value{"n": fn("count"), "s": fn("sum", fieldRef("a"))}), mapV(map[string]*pb.Value{"g": fieldRef("s")})),
		}}},
		{Pipeline: &pb.Pipeline{Stages: []*pb.Pipeline_Stage{pstage("database"),
			pstage("unnest", fieldRef("arr"), fieldRef("x")), pstage("distinct", mapV(map[string]*pb.Value{"x": fieldRef("x")})),
			pstage("union", &pb.Value{ValueType: &pb.Value_PipelineValue{PipelineValue: &pb.Pipeline{Stages: []*pb.Pipeline_Stage{coll}}}})}}},
		{Pipeline: &pb.Pipeline{Stages: []*pb.Pipeline_Stage{pstage("documents", refV("/c/d")),
			pstage("let", mapV(map[string]*pb.Value{"v": fn("current_document")})),
			pstage("select", mapV(map[string]*pb.Value{"r": fn("array_transform", fieldRef("arr"), stringV("e"), fn("multiply", &pb.Value{ValueType: &pb.Value_VariableReferenceValue{VariableReferenceValue: "e"}}, intV(2)))})),
			pstage("search", mapV(nil))}}},
		{Pipeline: &pb.Pipeline{Stages: []*pb.Pipeline_Stage{coll, pstage("sample", intV(1), stringV("documents")),
			pstage("find_nearest", fieldRef("v"), arrayV([]*pb.Value{doubleV(1)}), stringV("cosine")), pstage("replace_with", fieldRef("m"))}}},
	}
}

// FuzzExecute: any StructuredPipeline either runs or fails with a request
// error (an internal error is a bug); nothing panics. The seeds run as a unit test.
func FuzzExecute(f *testing.F) {
	for _, sp := range fuzzSeeds() {
		b, err := proto.Marshal(sp)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	eng, err := firestore.Open(firestore.Options{})
	if err != nil {
		f.Fatal(err)
	}
	eng.SetEditions(map[string]firestore.Edition{"": firestore.EditionEnterprise})
	owner := identity.Owner
	ctx := context.Background()
	_, err = eng.Commit(ctx, owner, fuzzDB, []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
		Name: fuzzDB + "/documents/c/d",
		Fields: map[string]*pb.Value{"a": intV(1), "b": stringV("x"), "arr": arrayV([]*pb.Value{intV(1), intV(2)}),
			"m": mapV(map[string]*pb.Value{"k": nullV}), "v": mapV(map[string]*pb.Value{"__type__": stringV("__vector__"), "value": arrayV([]*pb.Value{doubleV(1)})})},
	}}}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sp := &pb.StructuredPipeline{}
		if proto.Unmarshal(data, sp) != nil {
			return
		}
		_, err := Execute(ctx, eng, owner, Request{Database: fuzzDB, Pipeline: sp})
		if err != nil && errs.KindOf(err) == errs.Internal {
			t.Errorf("Execute: %v: want success or a request error (INVALID_ARGUMENT, or a write's precondition)", err)
		}
	})
}
