package firestore

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// ListenStream is one Listen stream, independent of transport: feed it the
// client's ListenRequests with Receive; it answers through send, in order,
// from one goroutine. Per target it sends ADD, the initial documents, CURRENT
// and then a global NO_CHANGE with a read time; after each commit it sends
// the documents that entered, changed or left the target and another global
// NO_CHANGE. A target it cannot serve gets REMOVE with a cause. A resumed
// target (resume token or read time) gets only what changed since then when
// the version history reaches back that far, RESET and the full result set
// otherwise, and then an ExistenceFilter with its document count so that
// the client can tell whether it missed a removal.
type ListenStream struct {
	e        *Engine
	caller   identity.Principal
	send     func(*pb.ListenResponse) error
	mu       sync.Mutex
	cond     *sync.Cond
	work     []func()
	closed   bool
	targets  map[int32]*listenTarget
	lastRead time.Time
	unsub    func()
	done     chan struct{}
}

type listenTarget struct {
	id      int32
	plan    *plan  // query targets
	names   []Name // document targets
	current map[string]*timestamppb.Timestamp
}

// NewListenStream starts a listen stream for caller. send is called from the
// stream's goroutine; an error from it closes the stream.
func (e *Engine) NewListenStream(caller identity.Principal, send func(*pb.ListenResponse) error) *ListenStream {
	s := &ListenStream{e: e, caller: caller, send: send, targets: map[int32]*listenTarget{}, done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	s.unsub = e.Subscribe(func(c Commit) { s.enqueue(func() { s.onCommit(c) }) })
	go s.run()
	return s
}

// Receive queues one client request.
func (s *ListenStream) Receive(req *pb.ListenRequest) {
	s.enqueue(func() { s.onRequest(req) })
}

// Close stops the stream and waits for its goroutine to end.
func (s *ListenStream) Close() {
	s.unsub()
	s.mu.Lock()
	s.closed = true
	s.cond.Signal()
	s.mu.Unlock()
	<-s.done
}

// Done is closed when the stream has stopped.
func (s *ListenStream) Done() <-chan struct{} { return s.done }

func (s *ListenStream) enqueue(f func()) {
	s.mu.Lock()
	if !s.closed {
		s.work = append(s.work, f)
		s.cond.Signal()
	}
	s.mu.Unlock()
}

func (s *ListenStream) run() {
	defer close(s.done)
	for {
		s.mu.Lock()
		for len(s.work) == 0 && !s.closed {
			s.cond.Wait()
		}
		if s.closed {
			s.mu.Unlock()
			return
		}
		work := s.work
		s.work = nil
		s.mu.Unlock()
		for _, f := range work {
			f()
		}
	}
}

func (s *ListenStream) emit(r *pb.ListenResponse) {
	if err := s.send(r); err != nil {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		go s.unsub()
	}
}

func targetChange(kind pb.TargetChange_TargetChangeType, ids ...int32) *pb.ListenResponse {
	return &pb.ListenResponse{ResponseType: &pb.ListenResponse_TargetChange{TargetChange: &pb.TargetChange{TargetChangeType: kind, TargetIds: ids}}}
}

func (s *ListenStream) onRequest(req *pb.ListenRequest) {
	switch r := req.GetTargetChange().(type) {
	case *pb.ListenRequest_AddTarget:
		s.addTarget(req.GetDatabase(), r.AddTarget)
	case *pb.ListenRequest_RemoveTarget:
		delete(s.targets, r.RemoveTarget)
		s.emit(targetChange(pb.TargetChange_REMOVE, r.RemoveTarget))
	}
}

func (s *ListenStream) fail(id int32, err error) {
	code, _, _ := KindOf(err).Status()
	r := targetChange(pb.TargetChange_REMOVE, id)
	r.GetTargetChange().Cause = &status.Status{Code: int32(code), Message: err.Error()}
	s.emit(r)
}

func (s *ListenStream) addTarget(database string, t *pb.Target) {
	lt := &listenTarget{id: t.GetTargetId(), current: map[string]*timestamppb.Timestamp{}}
	switch tt := t.GetTargetType().(type) {
	case *pb.Target_Query:
		p, err := planQuery(tt.Query.GetParent(), tt.Query.GetStructuredQuery())
		if err == nil && database != "" && p.parent.Database != database {
			err = errorf(InvalidArgument, "The query's parent is not in database %s.", database)
		}
		if err == nil {
			err = s.e.check(context.Background(), s.caller, Access{Method: MethodList, Name: collectionName(p), Query: tt.Query.GetStructuredQuery()})
		}
		if err != nil {
			s.fail(lt.id, err)
			return
		}
		lt.plan = p
	case *pb.Target_Documents:
		for _, name := range tt.Documents.GetDocuments() {
			n, err := ParseDocumentName(name)
			if err != nil {
				s.fail(lt.id, err)
				return
			}
			lt.names = append(lt.names, n)
		}
	default:
		s.fail(lt.id, errorf(InvalidArgument, "A target must be a query or documents."))
		return
	}
	resumeAt, resumed := resumeTime(t)
	s.e.mu.RLock()
	docs := s.e.targetDocs(lt, time.Time{})
	snapshotTime := s.e.readTimeLocked() // the state docs show, so a resume from it misses nothing
	var before map[string]*pb.Document   // the target at resumeAt, when the history has it
	if resumed && s.e.checkReadTime(resumeAt) == nil {
		before = s.e.targetDocs(lt, resumeAt)
	}
	s.e.mu.RUnlock()
	if lt.names != nil {
		for _, n := range lt.names {
			if err := s.e.check(context.Background(), s.caller, Access{Method: MethodGet, Name: n, Existing: docs[n.String()]}); err != nil {
				s.fail(lt.id, err)
				return
			}
		}
	}
	s.targets[lt.id] = lt
	s.emit(targetChange(pb.TargetChange_ADD, lt.id))
	if resumed && before == nil {
		s.emit(targetChange(pb.TargetChange_RESET, lt.id))
	}
	for _, name := range sortedKeys(docs) {
		doc := docs[name]
		lt.current[name] = doc.UpdateTime
		if old := before[name]; old != nil && proto.Equal(old.UpdateTime, doc.UpdateTime) {
			continue // the client has this version
		}
		s.emit(&pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentChange{DocumentChange: &pb.DocumentChange{Document: doc, TargetIds: []int32{lt.id}}}})
	}
	readTime := s.readTime(snapshotTime)
	for _, name := range sortedKeys(before) {
		if docs[name] == nil {
			s.emitRemoval(name, lt.id, readTime)
		}
	}
	if resumed && (lt.plan != nil || len(lt.names) == 1) {
		s.emit(&pb.ListenResponse{ResponseType: &pb.ListenResponse_Filter{Filter: &pb.ExistenceFilter{TargetId: lt.id, Count: int32(len(docs))}}})
	}
	current := targetChange(pb.TargetChange_CURRENT, lt.id)
	current.GetTargetChange().ResumeToken = resumeToken(readTime)
	current.GetTargetChange().ReadTime = timestamppb.New(readTime)
	s.emit(current)
	s.global(readTime)
}

// readTime keeps the read times sent monotonic.
func (s *ListenStream) readTime(t time.Time) time.Time {
	if t.Before(s.lastRead) {
		return s.lastRead
	}
	s.lastRead = t
	return t
}

func (s *ListenStream) global(t time.Time) {
	r := targetChange(pb.TargetChange_NO_CHANGE)
	r.GetTargetChange().ResumeToken = resumeToken(t)
	r.GetTargetChange().ReadTime = timestamppb.New(t)
	s.emit(r)
}

func resumeToken(t time.Time) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uint64(t.UnixMicro()))
	return b
}

// resumeTime returns the time a target resumes from: its read time, or the
// time in its resume token.
func resumeTime(t *pb.Target) (time.Time, bool) {
	if rt := t.GetReadTime(); rt != nil {
		return rt.AsTime(), true
	}
	if tok := t.GetResumeToken(); len(tok) == 8 {
		return time.UnixMicro(int64(binary.BigEndian.Uint64(tok))).UTC(), true
	}
	return time.Time{}, len(t.GetResumeToken()) > 0
}

// emitRemoval tells the client a document left the target: deleted when it
// no longer exists, removed otherwise.
func (s *ListenStream) emitRemoval(name string, id int32, readTime time.Time) {
	n, _ := ParseDocumentName(name)
	s.e.mu.RLock()
	exists := s.e.lookup(n) != nil
	s.e.mu.RUnlock()
	if exists {
		s.emit(&pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentRemove{DocumentRemove: &pb.DocumentRemove{Document: name, RemovedTargetIds: []int32{id}, ReadTime: timestamppb.New(readTime)}}})
		return
	}
	s.emit(&pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentDelete{DocumentDelete: &pb.DocumentDelete{Document: name, RemovedTargetIds: []int32{id}, ReadTime: timestamppb.New(readTime)}}})
}

// snapshot returns the target's current documents by name.
func (e *Engine) snapshot(t *listenTarget) map[string]*pb.Document {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.targetDocs(t, time.Time{})
}

// targetDocs returns the target's documents by name as of at (zero: the
// latest state); e.mu is held.
func (e *Engine) targetDocs(t *listenTarget, at time.Time) map[string]*pb.Document {
	out := map[string]*pb.Document{}
	if t.plan != nil {
		for _, d := range e.executeAt(t.plan, at) {
			out[d.Name] = d
		}
		return out
	}
	for _, n := range t.names {
		if d := e.lookupAt(n, at); d != nil {
			out[n.String()] = d
		}
	}
	return out
}

// touches reports whether a commit may change the target's results.
func (t *listenTarget) touches(c Commit) bool {
	for _, ch := range c.Changes {
		if t.plan != nil {
			if ch.Database != t.plan.parent.Database {
				continue
			}
			prefix := strings.Join(t.plan.parent.Path, "/")
			if prefix != "" {
				prefix += "/"
			}
			// A change can move the results only if the document matches
			// the query before or after it; the results reflect the state
			// before this commit, as commits arrive in order.
			if inScope(ch.Path, prefix, t.plan.collection, t.plan.descendants) && (t.plan.matches(ch.Old) || t.plan.matches(ch.New)) {
				return true
			}
			continue
		}
		for _, n := range t.names {
			if n.Database == ch.Database && strings.Join(n.Path, "/") == ch.Path {
				return true
			}
		}
	}
	return false
}

type docUpdate struct {
	doc     *pb.Document
	added   []int32
	removed []int32
	deleted bool
}

func (s *ListenStream) onCommit(c Commit) {
	updates := map[string]*docUpdate{}
	get := func(name string) *docUpdate {
		u := updates[name]
		if u == nil {
			u = &docUpdate{}
			updates[name] = u
		}
		return u
	}
	deleted := map[string]bool{}
	for _, ch := range c.Changes {
		if ch.New == nil && ch.Old != nil {
			deleted[ch.Old.Name] = true
		}
	}
	touched := false
	for _, id := range sortedTargetIDs(s.targets) {
		t := s.targets[id]
		if !t.touches(c) {
			continue
		}
		touched = true
		now := s.e.snapshot(t)
		for name, doc := range now {
			if old, ok := t.current[name]; !ok || !proto.Equal(old, doc.UpdateTime) {
				u := get(name)
				u.doc = doc
				u.added = append(u.added, id)
				t.current[name] = doc.UpdateTime
			}
		}
		for name := range t.current {
			if _, ok := now[name]; !ok {
				u := get(name)
				u.removed = append(u.removed, id)
				u.deleted = deleted[name]
				delete(t.current, name)
			}
		}
	}
	if !touched {
		return
	}
	readTime := s.readTime(c.Time)
	for _, name := range sortedKeys(updates) {
		u := updates[name]
		switch {
		case u.doc != nil:
			s.emit(&pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentChange{DocumentChange: &pb.DocumentChange{Document: u.doc, TargetIds: u.added, RemovedTargetIds: u.removed}}})
		case u.deleted:
			s.emit(&pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentDelete{DocumentDelete: &pb.DocumentDelete{Document: name, RemovedTargetIds: u.removed, ReadTime: timestamppb.New(readTime)}}})
		default:
			s.emit(&pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentRemove{DocumentRemove: &pb.DocumentRemove{Document: name, RemovedTargetIds: u.removed, ReadTime: timestamppb.New(readTime)}}})
		}
	}
	s.global(readTime)
}
