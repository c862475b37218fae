package firestore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// listenLog collects a ListenStream's responses as short lines.
type listenLog struct {
	mu    sync.Mutex
	lines []string
	token []byte
}

func (l *listenLog) send(r *pb.ListenResponse, _ bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var line string
	switch x := r.GetResponseType().(type) {
	case *pb.ListenResponse_TargetChange:
		if x.TargetChange.GetTargetChangeType() == pb.TargetChange_NO_CHANGE && len(x.TargetChange.GetTargetIds()) == 0 {
			l.token = x.TargetChange.GetResumeToken()
			line = "global"
		} else {
			line = x.TargetChange.GetTargetChangeType().String()
		}
	case *pb.ListenResponse_DocumentChange:
		line = "change " + x.DocumentChange.GetDocument().GetName()[len(ixDB+"/documents/"):]
	case *pb.ListenResponse_DocumentDelete:
		line = "delete " + x.DocumentDelete.GetDocument()[len(ixDB+"/documents/"):]
	case *pb.ListenResponse_DocumentRemove:
		line = "remove " + x.DocumentRemove.GetDocument()[len(ixDB+"/documents/"):]
	case *pb.ListenResponse_Filter:
		line = fmt.Sprint("filter ", x.Filter.GetCount())
	}
	l.lines = append(l.lines, line)
	return nil
}

// waitFor waits until the log ends with "global" and has at least n lines.
func (l *listenLog) waitFor(t *testing.T, n int) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		if len(l.lines) >= n && l.lines[len(l.lines)-1] == "global" {
			out := strings.Join(l.lines, ", ")
			l.mu.Unlock()
			return out
		}
		l.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Fatalf("listen stream sent only: %s", strings.Join(l.lines, ", "))
	return ""
}

func setDoc(id string, n int64) *pb.Write {
	return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: ixDB + "/documents/items/" + id, Fields: map[string]*pb.Value{"n": intValue(n)}}}}
}

// TestListenStream_Resume checks that a target resumed from a resume token
// or a read time gets only the changes since, then an existence filter, and
// that one resumed from beyond the history gets a reset and everything.
func TestListenStream_Resume(t *testing.T) {
	ctx := context.Background()
	e, _ := Open(Options{})
	defer e.Close()
	commit := func(writes ...*pb.Write) time.Time {
		t.Helper()
		res, err := e.Commit(ctx, identity.Owner, ixDB, writes, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Time
	}
	commit(setDoc("a", 1), setDoc("b", 2), setDoc("c", 3), setDoc("d", 40))
	// Documents with n < 10, by n, at most 3: a, b, c.
	query := &pb.Target_Query{Query: &pb.Target_QueryTarget{Parent: ixDB + "/documents", QueryType: &pb.Target_QueryTarget_StructuredQuery{StructuredQuery: &pb.StructuredQuery{
		From:    []*pb.StructuredQuery_CollectionSelector{{CollectionId: "items"}},
		Where:   fieldFilter("n", pb.StructuredQuery_FieldFilter_LESS_THAN, intValue(10)),
		OrderBy: []*pb.StructuredQuery_Order{{Field: &pb.StructuredQuery_FieldReference{FieldPath: "n"}}},
	}}}}
	first := &listenLog{}
	s := e.NewListenStream(identity.Owner, first.send)
	s.Receive(&pb.ListenRequest{TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 2, TargetType: query}}})
	if got, want := first.waitFor(t, 6), "ADD, change items/a, change items/b, change items/c, CURRENT, global"; got != want {
		t.Fatalf("first listen: %s, want %s", got, want)
	}
	s.Close()
	token := first.token
	before := commit(setDoc("x", 0)) // unrelated to the resume below: taken after the token
	commit(setDoc("b", 20))          // leaves the target
	commit(&pb.Write{Operation: &pb.Write_Delete{Delete: ixDB + "/documents/items/c"}})
	commit(setDoc("e", 5), setDoc("a", 1)) // enters; a unchanged

	tests := []struct {
		name   string
		target *pb.Target
		want   string
	}{
		{"resume token", &pb.Target{TargetId: 4, TargetType: query, ResumeType: &pb.Target_ResumeToken{ResumeToken: token}},
			"ADD, change items/e, change items/x, remove items/b, delete items/c, filter 3, CURRENT, global"},
		{"read time", &pb.Target{TargetId: 4, TargetType: query, ResumeType: &pb.Target_ReadTime{ReadTime: timestamppb.New(before)}},
			"ADD, change items/e, remove items/b, delete items/c, filter 3, CURRENT, global"},
		{"beyond the history", &pb.Target{TargetId: 4, TargetType: query, ResumeType: &pb.Target_ReadTime{ReadTime: timestamppb.New(before.Add(-2 * defaultHistoryWindow))}},
			"ADD, RESET, change items/a, change items/e, change items/x, filter 3, CURRENT, global"},
		{"unknown token", &pb.Target{TargetId: 4, TargetType: query, ResumeType: &pb.Target_ResumeToken{ResumeToken: []byte("junk")}},
			"ADD, RESET, change items/a, change items/e, change items/x, filter 3, CURRENT, global"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &listenLog{}
			s := e.NewListenStream(identity.Owner, l.send)
			defer s.Close()
			s.Receive(&pb.ListenRequest{TargetChange: &pb.ListenRequest_AddTarget{AddTarget: tt.target}})
			if got := l.waitFor(t, strings.Count(tt.want, ",")+1); got != tt.want {
				t.Errorf("resumed listen: %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestListenStream_SharesCommitResponses: streams announcing one commit send
// the same response value when its content is equal, marked shared, and
// their own when it is not (another target id).
func TestListenStream_SharesCommitResponses(t *testing.T) {
	ctx := context.Background()
	e, _ := Open(Options{})
	defer e.Close()
	type sent struct {
		r      *pb.ListenResponse
		shared bool
	}
	var mu sync.Mutex
	got := map[string][]sent{} // by stream
	watch := func(stream string, targetID int32) {
		s := e.NewListenStream(identity.Owner, func(r *pb.ListenResponse, shared bool) error {
			mu.Lock()
			defer mu.Unlock()
			got[stream] = append(got[stream], sent{r, shared})
			return nil
		})
		t.Cleanup(s.Close)
		s.Receive(&pb.ListenRequest{TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: targetID, TargetType: &pb.Target_Documents{
			Documents: &pb.Target_DocumentsTarget{Documents: []string{ixDB + "/documents/items/s"}},
		}}}})
	}
	watch("a", 2)
	watch("b", 2)
	watch("c", 4)
	// Each stream sends ADD, CURRENT and a global change for its empty target.
	waitUntil := func(n int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			ready := len(got["a"]) >= n && len(got["b"]) >= n && len(got["c"]) >= n
			mu.Unlock()
			if ready {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("streams sent only %d, %d and %d responses, want %d", len(got["a"]), len(got["b"]), len(got["c"]), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitUntil(3)
	if _, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{setDoc("s", 1)}, nil); err != nil {
		t.Fatal(err)
	}
	waitUntil(5)
	mu.Lock()
	defer mu.Unlock()
	a, b, c := got["a"][3:5], got["b"][3:5], got["c"][3:5]
	for i, what := range []string{"document change", "global change"} {
		if !a[i].shared || !b[i].shared || !c[i].shared {
			t.Errorf("%s: not marked shared", what)
		}
	}
	if a[0].r != b[0].r {
		t.Error("two streams with the same target id got different document changes")
	}
	if a[0].r == c[0].r || !slices.Equal(c[0].r.GetDocumentChange().GetTargetIds(), []int32{4}) {
		t.Errorf("the stream with target 4 got %v", c[0].r)
	}
	if a[1].r != c[1].r || a[1].r.GetTargetChange().GetTargetChangeType() != pb.TargetChange_NO_CHANGE {
		t.Errorf("global changes: %v and %v, want one shared NO_CHANGE", a[1].r, c[1].r)
	}
}

// TestListenStream_ABlockedStreamOfASharedTargetCatchesUp: two streams
// listen to the same query; one's client stops reading while more commits
// go by than its target may fall behind the shared log of changed paths.
// The other gets every document meanwhile; the blocked one, once it reads
// again, gets every document too (its target read again whole), and both
// end with the same results.
func TestListenStream_ABlockedStreamOfASharedTargetCatchesUp(t *testing.T) {
	ctx := context.Background()
	e, _ := Open(Options{})
	defer e.Close()
	query := &pb.Target{TargetId: 2, TargetType: &pb.Target_Query{Query: &pb.Target_QueryTarget{Parent: ixDB + "/documents",
		QueryType: &pb.Target_QueryTarget_StructuredQuery{StructuredQuery: &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "items"}}}}}}}
	var mu sync.Mutex
	docs := map[string]map[string]bool{"reads": {}, "blocked": {}}
	gate := make(chan struct{})
	var releaseGate sync.Once
	release := func() { releaseGate.Do(func() { close(gate) }) }
	t.Cleanup(release)
	watch := func(stream string) {
		current := make(chan struct{})
		var once sync.Once
		s := e.NewListenStream(identity.Owner, func(r *pb.ListenResponse, shared bool) error {
			if d := r.GetDocumentChange().GetDocument(); d != nil {
				if stream == "blocked" {
					<-gate // the client reads nothing until the gate opens
				}
				mu.Lock()
				docs[stream][d.Name] = true
				mu.Unlock()
			}
			if r.GetTargetChange().GetTargetChangeType() == pb.TargetChange_CURRENT {
				once.Do(func() { close(current) })
			}
			return nil
		})
		t.Cleanup(s.Close)
		s.Receive(&pb.ListenRequest{TargetChange: &pb.ListenRequest_AddTarget{AddTarget: query}})
		<-current
	}
	watch("reads")
	watch("blocked")
	const commits = 3*maxChangedPaths + 10
	for i := range commits {
		if _, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{setDoc(fmt.Sprintf("d%05d", i), int64(i))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	count := func(stream string) int {
		mu.Lock()
		defer mu.Unlock()
		return len(docs[stream])
	}
	waitFor := func(stream string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); count(stream) < commits; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the %s stream got %d of %d documents", stream, count(stream), commits)
			}
		}
	}
	waitFor("reads")
	release()
	waitFor("blocked")
	mu.Lock()
	defer mu.Unlock()
	if !maps.Equal(docs["reads"], docs["blocked"]) {
		t.Error("the two streams ended with different documents")
	}
}
