package pipeline

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// listenLines reads a Listen stream's responses as short lines, one
// snapshot (up to a global NO_CHANGE) at a time.
type listenLines chan string

func (l listenLines) send(r *pb.ListenResponse, _ bool) error {
	docs := fuzzDB + "/documents/"
	switch x := r.GetResponseType().(type) {
	case *pb.ListenResponse_TargetChange:
		tc := x.TargetChange
		switch {
		case tc.GetTargetChangeType() == pb.TargetChange_NO_CHANGE && len(tc.GetTargetIds()) == 0:
			l <- "global"
		case tc.GetCause() != nil:
			l <- tc.GetTargetChangeType().String() + " " + tc.GetCause().GetMessage()
		default:
			l <- tc.GetTargetChangeType().String()
		}
	case *pb.ListenResponse_DocumentChange:
		l <- "change " + strings.TrimPrefix(x.DocumentChange.GetDocument().GetName(), docs)
	case *pb.ListenResponse_DocumentDelete:
		l <- "delete " + strings.TrimPrefix(x.DocumentDelete.GetDocument(), docs)
	case *pb.ListenResponse_DocumentRemove:
		l <- "remove " + strings.TrimPrefix(x.DocumentRemove.GetDocument(), docs)
	case *pb.ListenResponse_Filter:
		l <- "filter"
	}
	return nil
}

// next returns the lines of the next snapshot that changed something: up
// to a global NO_CHANGE, or to a removed target. A global NO_CHANGE with
// nothing before it (the protocol allows one at any time) is skipped.
func (l listenLines) next(t *testing.T) string {
	t.Helper()
	var out []string
	for {
		select {
		case line := <-l:
			if line == "global" && len(out) == 0 {
				continue
			}
			out = append(out, line)
			if line == "global" || strings.HasPrefix(line, "REMOVE") {
				return strings.Join(out, ", ")
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no snapshot after %q", out)
		}
	}
}

// TestListener_RealtimePipeline: a pipeline Listen target gets the
// pipeline's documents, then each commit's effect on them: documents that
// enter, change, leave (removed while they exist, deleted once gone).
func TestListener_RealtimePipeline(t *testing.T) {
	ctx := context.Background()
	eng := enterpriseEngine(t, nil)
	set := func(id string, a int64) *pb.Write {
		return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: fuzzDB + "/documents/c/" + id, Fields: map[string]*pb.Value{"a": intV(a)}}}}
	}
	commit := func(w ...*pb.Write) {
		t.Helper()
		if _, err := eng.Commit(ctx, identity.Owner, fuzzDB, w, nil); err != nil {
			t.Fatal(err)
		}
	}
	commit(set("x", 1), set("y", 5))
	// Documents of c with a < 3.
	sp := &pb.StructuredPipeline{Pipeline: &pb.Pipeline{Stages: []*pb.Pipeline_Stage{
		pstage("collection", refV("/c")), pstage("where", fn("less_than", fieldRef("a"), intV(3)))}}}
	lines := listenLines(make(chan string, 64))
	ls := eng.NewListenStream(identity.Owner, lines.send)
	defer ls.Close()
	add := &pb.ListenRequest{Database: fuzzDB, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 2}}}
	ls.ReceivePipeline(add, Listener(eng, identity.Owner, fuzzDB, sp), Scope(sp))
	if got, want := lines.next(t), "ADD, change c/x, CURRENT, global"; got != want {
		t.Fatalf("initial snapshot: %s, want %s", got, want)
	}
	commit(set("y", 2))
	if got, want := lines.next(t), "change c/y, global"; got != want {
		t.Fatalf("after y entered: %s, want %s", got, want)
	}
	commit(set("x", 7))
	if got, want := lines.next(t), "remove c/x, global"; got != want {
		t.Fatalf("after x left: %s, want %s", got, want)
	}
	commit(&pb.Write{Operation: &pb.Write_Delete{Delete: fuzzDB + "/documents/c/y"}})
	if got, want := lines.next(t), "delete c/y, global"; got != want {
		t.Fatalf("after y was deleted: %s, want %s", got, want)
	}

	// Resumed from a read time, a target gets only what changed since,
	// then an existence filter with its count.
	before := time.Now()
	commit(set("z", 0))
	if got, want := lines.next(t), "change c/z, global"; got != want {
		t.Fatalf("after z entered: %s, want %s", got, want)
	}
	res, err := eng.Commit(ctx, identity.Owner, fuzzDB, []*pb.Write{set("w", 9)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for at, want := range map[time.Time]string{
		res.Time: "ADD, filter, CURRENT, global",
		before:   "ADD, change c/z, filter, CURRENT, global",
	} {
		resumed := listenLines(make(chan string, 64))
		rs := eng.NewListenStream(identity.Owner, resumed.send)
		add := &pb.ListenRequest{Database: fuzzDB, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 2,
			ResumeType: &pb.Target_ReadTime{ReadTime: timestamppb.New(at)}}}}
		rs.ReceivePipeline(add, Listener(eng, identity.Owner, fuzzDB, sp), Scope(sp))
		if got := resumed.next(t); got != want {
			t.Errorf("resumed from %v: %s, want %s", at, got, want)
		}
		rs.Close()
	}

	// A pipeline that writes is refused, not run on every commit.
	insert := &pb.StructuredPipeline{Pipeline: &pb.Pipeline{Stages: []*pb.Pipeline_Stage{
		pstage("collection", refV("/c")), pstage("delete")}}}
	add = &pb.ListenRequest{Database: fuzzDB, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 4}}}
	ls.ReceivePipeline(add, Listener(eng, identity.Owner, fuzzDB, insert), Scope(insert))
	if got, want := lines.next(t), `REMOVE Stage "delete" is not supported in a realtime pipeline.`; got != want {
		t.Fatalf("writing pipeline: %s, want %s", got, want)
	}
}

// denySecret is an authorizer that refuses everything under secret/ and,
// once closed, everything.
type denySecret struct{ closed bool }

func (d *denySecret) Authorize(_ context.Context, a firestore.Access) error {
	if d.closed || len(a.Name.Path) > 0 && a.Name.Path[0] == "secret" {
		return errs.New(errs.PermissionDenied, "Missing or insufficient permissions.")
	}
	return nil
}

// TestListener_RealtimePipelineObeysTheRules: a realtime pipeline target of
// a signed-in user is judged by the rules as a query target is: one over a
// collection they may not read is removed with PERMISSION_DENIED and gets
// no document; an allowed one is removed once new rules refuse it.
func TestListener_RealtimePipelineObeysTheRules(t *testing.T) {
	ctx := context.Background()
	rules := &denySecret{}
	eng := enterpriseEngine(t, rules)
	for _, path := range []string{"secret/s1", "c/x"} {
		w := &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: fuzzDB + "/documents/" + path, Fields: map[string]*pb.Value{"a": intV(1)}}}}
		if _, err := eng.Commit(ctx, identity.Owner, fuzzDB, []*pb.Write{w}, nil); err != nil {
			t.Fatal(err)
		}
	}
	user := identity.Principal{UID: "ann"}
	listen := func(collection string) listenLines {
		lines := listenLines(make(chan string, 64))
		ls := eng.NewListenStream(user, lines.send)
		t.Cleanup(ls.Close)
		sp := &pb.StructuredPipeline{Pipeline: &pb.Pipeline{Stages: []*pb.Pipeline_Stage{pstage("collection", refV("/"+collection))}}}
		add := &pb.ListenRequest{Database: fuzzDB, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 2}}}
		ls.ReceivePipeline(add, Listener(eng, user, fuzzDB, sp), Scope(sp))
		return lines
	}
	if got, want := listen("secret").next(t), "REMOVE Missing or insufficient permissions."; got != want {
		t.Errorf("a pipeline over secret/: %s, want %s", got, want)
	}
	allowed := listen("c")
	if got, want := allowed.next(t), "ADD, change c/x, CURRENT, global"; got != want {
		t.Fatalf("a pipeline over c/: %s, want %s", got, want)
	}
	closed := *rules
	closed.closed = true
	eng.SetAuthorizer(&closed)
	if got, want := allowed.next(t), "REMOVE Missing or insufficient permissions."; got != want {
		t.Errorf("after new rules refuse c/: %s, want %s", got, want)
	}
}

// TestScope_CommitsRunOnlyThePipelinesTheyConcern: a realtime pipeline over
// a collection or a collection group is read again for commits there only;
// one over the database, or holding a subquery, for every commit.
func TestScope_CommitsRunOnlyThePipelinesTheyConcern(t *testing.T) {
	sub := &pb.Value{ValueType: &pb.Value_PipelineValue{PipelineValue: &pb.Pipeline{Stages: []*pb.Pipeline_Stage{pstage("collection", refV("/other"))}}}}
	for _, tc := range []struct {
		stages []*pb.Pipeline_Stage
		want   firestore.PipelineScope
	}{
		{[]*pb.Pipeline_Stage{pstage("collection", refV("/users/u1/posts"))}, firestore.PipelineScope{Collection: "users/u1/posts"}},
		{[]*pb.Pipeline_Stage{pstage("collection_group", refV(""), stringV("posts"))}, firestore.PipelineScope{Collection: "posts", Group: true}},
		{[]*pb.Pipeline_Stage{pstage("database")}, firestore.PipelineScope{}},
		{[]*pb.Pipeline_Stage{pstage("collection", refV("/c")), pstage("where", fn("equal", fieldRef("a"), fn("array_length", sub)))}, firestore.PipelineScope{}},
	} {
		if got := Scope(&pb.StructuredPipeline{Pipeline: &pb.Pipeline{Stages: tc.stages}}); got != tc.want {
			t.Errorf("Scope(%v) = %+v, want %+v", tc.stages[0].GetName(), got, tc.want)
		}
	}

	ctx := context.Background()
	eng := enterpriseEngine(t, nil)
	commit := func(path string) {
		t.Helper()
		w := &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: fuzzDB + "/documents/" + path, Fields: map[string]*pb.Value{"a": intV(1)}}}}
		if _, err := eng.Commit(ctx, identity.Owner, fuzzDB, []*pb.Write{w}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// On one stream: a counted pipeline over c, and one over the whole database whose
	// changes say the stream has caught up with a commit.
	lines := listenLines(make(chan string, 64))
	ls := eng.NewListenStream(identity.Owner, lines.send)
	defer ls.Close()
	var reads atomic.Int32
	overC := &pb.StructuredPipeline{Pipeline: &pb.Pipeline{Stages: []*pb.Pipeline_Stage{pstage("collection", refV("/c"))}}}
	read := Listener(eng, identity.Owner, fuzzDB, overC)
	counted := func(at time.Time) ([]*pb.Document, error) { reads.Add(1); return read(at) }
	ls.ReceivePipeline(&pb.ListenRequest{Database: fuzzDB, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 2}}}, counted, Scope(overC))
	if got, want := lines.next(t), "ADD, CURRENT, global"; got != want {
		t.Fatalf("the pipeline over c: %s, want %s", got, want)
	}
	all := &pb.StructuredPipeline{Pipeline: &pb.Pipeline{Stages: []*pb.Pipeline_Stage{pstage("database")}}}
	ls.ReceivePipeline(&pb.ListenRequest{Database: fuzzDB, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 4}}},
		Listener(eng, identity.Owner, fuzzDB, all), Scope(all))
	if got, want := lines.next(t), "ADD, CURRENT, global"; got != want {
		t.Fatalf("the pipeline over the database: %s, want %s", got, want)
	}
	before := reads.Load()
	for _, path := range []string{"other/x", "c/x/sub/y", "cc/z"} {
		commit(path)
		if got, want := lines.next(t), "change "+path+", global"; got != want {
			t.Fatalf("after a commit to %s: %s, want %s", path, got, want)
		}
	}
	if n := reads.Load() - before; n != 0 {
		t.Errorf("commits outside c read the pipeline over c %d times, want none", n)
	}
	commit("c/x")
	if got, want := lines.next(t), "change c/x, global"; got != want {
		t.Fatalf("after a commit to c/x: %s, want %s", got, want)
	}
	if n := reads.Load() - before; n != 1 {
		t.Errorf("a commit to c read the pipeline over c %d times, want once", n)
	}
}

// enterpriseEngine is an engine whose default database is an Enterprise one
// (it serves pipelines), judged by authorizer (nil allows all), closed with
// the test.
func enterpriseEngine(t *testing.T, authorizer firestore.Authorizer) *firestore.Engine {
	t.Helper()
	eng, err := firestore.Open(firestore.Options{Authorizer: authorizer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	eng.SetEditions(map[string]firestore.Edition{"": firestore.EditionEnterprise})
	return eng
}
