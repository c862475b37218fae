package firestore

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
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
//
// Responses are never modified once sent. The responses that announce one
// commit are shared: streams that send equal ones send the same value, with
// shared set, so that a transport can encode it once for all of them (keyed
// by pointer).
type ListenStream struct {
	e        *Engine
	caller   identity.Principal
	send     func(r *pb.ListenResponse, shared bool) error
	mu       sync.Mutex
	work     []func()
	running  bool // a goroutine is doing the queued work
	closed   bool
	stopped  chan struct{} // closed once closed and nothing runs
	targets  map[int32]*listenTarget
	lastRead time.Time
	unsub    func()
}

type listenTarget struct {
	id      int32
	plan    *plan  // query targets
	prefix  string // of the paths in the query's scope: its parent's path and "/", or ""
	names   []Name // document targets
	paths   []string
	current map[string]*timestamppb.Timestamp
}

// NewListenStream starts a listen stream for caller. send is called from one
// goroutine at a time, in order; an error from it closes the stream. An idle
// stream holds no goroutine.
func (e *Engine) NewListenStream(caller identity.Principal, send func(r *pb.ListenResponse, shared bool) error) *ListenStream {
	s := &ListenStream{e: e, caller: caller, send: send, targets: map[int32]*listenTarget{}, stopped: make(chan struct{})}
	s.unsub = e.Subscribe(func(c Commit) { s.enqueue(func() { s.onCommit(c) }) })
	return s
}

// Receive queues one client request.
func (s *ListenStream) Receive(req *pb.ListenRequest) {
	s.enqueue(func() { s.onRequest(req) })
}

// Close stops the stream and waits until none of its work runs.
func (s *ListenStream) Close() {
	s.unsub()
	s.mu.Lock()
	s.stopLocked()
	s.mu.Unlock()
	<-s.stopped
}

// stopLocked closes the stream to new work; s.mu is held. The goroutine at
// work, if any, reports the stop when it sees it.
func (s *ListenStream) stopLocked() {
	if s.closed {
		return
	}
	s.closed = true
	s.work = nil
	if !s.running {
		close(s.stopped)
	}
}

// enqueue queues f, starting a goroutine to do the queued work unless one
// is at it.
func (s *ListenStream) enqueue(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.work = append(s.work, f)
	if !s.running {
		s.running = true
		go s.run()
	}
}

// run does the queued work in order and ends when there is none left.
func (s *ListenStream) run() {
	for {
		s.mu.Lock()
		work := s.work
		s.work = nil
		if len(work) == 0 || s.closed {
			s.running = false
			if s.closed {
				close(s.stopped)
			}
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		for _, f := range work {
			f()
		}
	}
}

func (s *ListenStream) emit(r *pb.ListenResponse) { s.emitShared(r, false) }

func (s *ListenStream) emitShared(r *pb.ListenResponse, shared bool) {
	if err := s.send(r, shared); err != nil {
		s.unsub()
		s.mu.Lock()
		s.stopLocked()
		s.mu.Unlock()
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
	code, _, _ := errs.KindOf(err).Status()
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
			err = errorf(errs.InvalidArgument, "The query's parent is not in database %s.", database)
		}
		if err == nil && p.nearest != nil {
			err = errorf(errs.InvalidArgument, "Vector search (FindNearest) does not support listening to queries.")
		}
		if err == nil {
			err = s.e.check(context.Background(), s.caller, Access{Method: MethodList, Name: collectionName(p), Query: tt.Query.GetStructuredQuery()})
		}
		if err == nil {
			err = s.e.checkIndexes(p)
		}
		if err != nil {
			s.fail(lt.id, err)
			return
		}
		lt.plan = p
		if len(p.parent.Path) > 0 {
			lt.prefix = strings.Join(p.parent.Path, "/") + "/"
		}
	case *pb.Target_Documents:
		for _, name := range tt.Documents.GetDocuments() {
			n, err := ParseDocumentName(name)
			if err != nil {
				s.fail(lt.id, err)
				return
			}
			lt.names = append(lt.names, n)
			lt.paths = append(lt.paths, strings.Join(n.Path, "/"))
		}
	default:
		s.fail(lt.id, errorf(errs.InvalidArgument, "A target must be a query or documents."))
		return
	}
	if lt.plan != nil {
		s.e.ensureIndexes(lt.plan)
	}
	resumeAt, resumed := resumeTime(t)
	s.e.mu.RLock()
	docs := s.e.targetDocs(lt, s.e.readAt(time.Time{}))
	snapshotTime := s.e.readTimeLocked() // the state docs show, so a resume from it misses nothing
	var before map[string]*pb.Document   // the target at resumeAt, when the history has it
	if resumed && s.e.checkReadTime(resumeAt) == nil {
		before = s.e.targetDocs(lt, s.e.readAt(resumeAt))
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

func (s *ListenStream) global(t time.Time) { s.emit(globalChange(t)) }

// globalChange is the NO_CHANGE for all targets that carries a read time.
func globalChange(t time.Time) *pb.ListenResponse {
	r := targetChange(pb.TargetChange_NO_CHANGE)
	r.GetTargetChange().ResumeToken = resumeToken(t)
	r.GetTargetChange().ReadTime = timestamppb.New(t)
	return r
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
	exists := s.e.lookupAt(n, s.e.readAt(time.Time{})) != nil
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
	return e.targetDocs(t, e.readAt(time.Time{}))
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
			// A change can move the results only if the document matches
			// the query before or after it; the results reflect the state
			// before this commit, as commits arrive in order.
			if inScope(ch.Path, t.prefix, t.plan.collection, t.plan.descendants) && (t.plan.matches(ch.Old) || t.plan.matches(ch.New)) {
				return true
			}
			continue
		}
		for i, n := range t.names {
			if t.paths[i] == ch.Path && n.Database == ch.Database {
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
	for _, id := range slices.Sorted(maps.Keys(s.targets)) {
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
			s.emitShared(c.shared.get(fmt.Sprintf("change\x00%s\x00%d\x00%v\x00%v", name, u.doc.UpdateTime.AsTime().UnixNano(), u.added, u.removed), func() *pb.ListenResponse {
				return &pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentChange{DocumentChange: &pb.DocumentChange{Document: u.doc, TargetIds: u.added, RemovedTargetIds: u.removed}}}
			}), true)
		case u.deleted:
			s.emitShared(c.shared.get(fmt.Sprintf("delete\x00%s\x00%d\x00%v", name, readTime.UnixNano(), u.removed), func() *pb.ListenResponse {
				return &pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentDelete{DocumentDelete: &pb.DocumentDelete{Document: name, RemovedTargetIds: u.removed, ReadTime: timestamppb.New(readTime)}}}
			}), true)
		default:
			s.emitShared(c.shared.get(fmt.Sprintf("remove\x00%s\x00%d\x00%v", name, readTime.UnixNano(), u.removed), func() *pb.ListenResponse {
				return &pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentRemove{DocumentRemove: &pb.DocumentRemove{Document: name, RemovedTargetIds: u.removed, ReadTime: timestamppb.New(readTime)}}}
			}), true)
		}
	}
	s.emitShared(c.shared.get(fmt.Sprintf("global\x00%d", readTime.UnixNano()), func() *pb.ListenResponse { return globalChange(readTime) }), true)
}

// sharedResponses holds the Listen responses built for one commit, by a key
// naming their content, so that every stream announcing the commit sends the
// same values. A nil one shares nothing.
type sharedResponses struct {
	mu        sync.Mutex
	responses map[string]*pb.ListenResponse
}

// get returns the response stored under key, building it on first use.
func (r *sharedResponses) get(key string, build func() *pb.ListenResponse) *pb.ListenResponse {
	if r == nil {
		return build()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	resp, ok := r.responses[key]
	if !ok {
		if r.responses == nil {
			r.responses = map[string]*pb.ListenResponse{}
		}
		resp = build()
		r.responses[key] = resp
	}
	return resp
}
