package firestore

import (
	"context"
	"encoding/binary"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

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
// and then a global NO_CHANGE with a read time; as commits change a target's
// results it sends the documents that entered, changed or left the target
// and another global NO_CHANGE. A target it cannot serve, or that the rules
// no longer allow (a listened document changed so that they deny it, or the
// rules changed: RecheckListeners), gets REMOVE with a cause. A resumed
// target (resume token or read time) gets only what changed since then when
// the version history reaches back that far, RESET and the full result set
// otherwise, and then an ExistenceFilter with its document count so that
// the client can tell whether it missed a removal.
//
// A stream queues no commits: the engine's target index logs once, in the
// group of the targets that watch the same thing, which paths changed, and
// signals the streams; each reads the log from where it caught up last and
// sends the state of those documents as of the latest durable commit, with
// that read time. A client that does not read (a send that blocks, as
// gRPC's does once the client's window is full) costs its position in the
// log however many commits go by (past maxChangedPaths it reads the target
// again whole), and then gets the latest state, as a production client
// resuming from its resume token does.
//
// Responses are never modified once sent. Streams that send equal responses
// for the same read time send the same value, with shared set, so that a
// transport can encode it once for all of them (keyed by pointer).
type ListenStream struct {
	e      *Engine
	caller identity.Principal
	send   func(r *pb.ListenResponse, shared bool) error

	mu       sync.Mutex
	room     *sync.Cond // signalled when queued requests are taken or the stream closes
	requests []listenRequest
	dirty    []*listenTarget // targets with changes not yet sent, each once
	recheck  bool            // the rules changed: judge every target again
	running  bool            // a goroutine is doing the queued work
	closed   bool
	stopped  chan struct{} // closed once closed and nothing runs

	// Owned by the goroutine at work.
	targets  map[int32]*listenTarget
	lastRead time.Time
	failed   bool          // send failed: nothing more is sent
	batching bool          // catching up: responses wait in outbox
	outbox   []outResponse // sent once the catch-up has released its turn
}

// outResponse is a response waiting to be sent.
type outResponse struct {
	r      *pb.ListenResponse
	shared bool
}

// Bounds of what one stream queues.
const (
	// maxQueuedRequests is how many client requests wait before Receive blocks.
	maxQueuedRequests = 256
	// maxChangedPaths is how far behind a group's log a target may be before
	// it is read again whole instead; the log keeps at most twice that.
	maxChangedPaths = 1024
)

// listenRequest is a queued client request; a pipeline target's comes
// with the reader of its pipeline, which the Target message cannot carry.
type listenRequest struct {
	req      *pb.ListenRequest
	pipeline PipelineRead
	scope    PipelineScope
}

// PipelineScope is what a realtime pipeline target reads, so that only
// commits there run it again: the documents directly in Collection
// ("users", "users/u1/posts"), or with Group those of every collection
// with that id; the zero value is the whole database.
type PipelineScope struct {
	Collection string
	Group      bool
}

// PipelineRead reads a realtime pipeline's results as of a read time: the
// documents it outputs, or the error (an invalid pipeline, the rules) that
// removes its target. The pipeline package makes them; the transport
// adapters pass them with the target (ReceivePipeline).
type PipelineRead func(at time.Time) ([]*pb.Document, error)

type listenTarget struct {
	s  *ListenStream
	id int32
	watched
	names   []Name                            // document targets
	current map[string]*timestamppb.Timestamp // owned by the goroutine at work

	group  *targetGroup // the targets watching the same thing, set by targetIndex.add
	cursor uint64       // the position in group's log caught up to; owned by the goroutine at work
	// signalled is set when the group changed and the target waits in
	// s.dirty, so that a commit signals a waiting target without a lock.
	signalled atomic.Bool
}

// NewListenStream starts a listen stream for caller. send is called from one
// goroutine at a time, in order; an error from it closes the stream. An idle
// stream holds no goroutine.
func (e *Engine) NewListenStream(caller identity.Principal, send func(r *pb.ListenResponse, shared bool) error) *ListenStream {
	s := &ListenStream{e: e, caller: caller, send: send, targets: map[int32]*listenTarget{}, stopped: make(chan struct{})}
	s.room = sync.NewCond(&s.mu)
	return s
}

// Receive queues one client request. It blocks while maxQueuedRequests
// wait, until the stream takes them or closes.
func (s *ListenStream) Receive(req *pb.ListenRequest) { s.receive(listenRequest{req: req}) }

// ReceivePipeline queues a request that adds a realtime pipeline target:
// req's target (its id, resume token or read time) with the reader of its
// pipeline in place of a query, read again on each commit in scope.
func (s *ListenStream) ReceivePipeline(req *pb.ListenRequest, read PipelineRead, scope PipelineScope) {
	s.receive(listenRequest{req: req, pipeline: read, scope: scope})
}

func (s *ListenStream) receive(req listenRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.requests) >= maxQueuedRequests && !s.closed {
		s.room.Wait()
	}
	if s.closed {
		return
	}
	s.requests = append(s.requests, req)
	s.startLocked()
}

// Close stops the stream, waits until none of its work runs and drops its
// targets from the engine's index.
func (s *ListenStream) Close() {
	s.mu.Lock()
	s.stopLocked()
	s.mu.Unlock()
	<-s.stopped
	for id, t := range s.targets {
		s.e.targets.remove(t)
		delete(s.targets, id)
	}
	s.e.targets.forget(s)
}

// stopLocked closes the stream to new work; s.mu is held. The goroutine at
// work, if any, reports the stop when it sees it.
func (s *ListenStream) stopLocked() {
	if s.closed {
		return
	}
	s.closed = true
	s.requests, s.dirty = nil, nil
	s.room.Broadcast()
	if !s.running {
		close(s.stopped)
	}
}

// startLocked starts a goroutine to do the queued work unless one is at
// it; s.mu is held.
func (s *ListenStream) startLocked() {
	if !s.running {
		s.running = true
		go s.run()
	}
}

// changed records that target t's group changed; the target index calls
// it for each commit that may change its results. A target already waiting
// costs no lock.
func (s *ListenStream) changed(t *listenTarget) {
	if t.signalled.Swap(true) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.dirty = append(s.dirty, t)
	s.startLocked()
}

// requestRecheck has the stream judge its targets again.
func (s *ListenStream) requestRecheck() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.caller.Owner {
		return
	}
	s.recheck = true
	s.startLocked()
}

// pendingTarget is what changed in one target when the stream took it up.
type pendingTarget struct {
	t      *listenTarget
	paths  []string
	rescan bool
}

// run does the queued work (client requests first, then the rules, then
// the changes) and ends when there is none left.
func (s *ListenStream) run() {
	for {
		s.mu.Lock()
		if s.closed || (len(s.requests) == 0 && len(s.dirty) == 0 && !s.recheck) {
			s.running = false
			if s.closed {
				close(s.stopped)
			}
			s.mu.Unlock()
			return
		}
		requests, recheck, dirty := s.requests, s.recheck, s.dirty
		s.requests, s.recheck, s.dirty = nil, false, nil
		for _, t := range dirty {
			t.signalled.Store(false) // before its log is read: a later change signals again
		}
		s.room.Broadcast()
		s.mu.Unlock()
		for _, r := range requests {
			s.onRequest(r)
		}
		if recheck {
			s.recheckTargets()
		}
		pending := make([]pendingTarget, 0, len(dirty))
		for _, t := range dirty {
			if s.targets[t.id] != t {
				continue // removed meanwhile
			}
			p := pendingTarget{t: t}
			p.paths, t.cursor, p.rescan = t.group.since(t.cursor)
			if p.rescan || len(p.paths) > 0 {
				pending = append(pending, p)
			}
		}
		if len(pending) > 0 {
			// A turn bounds how many streams read at once, so that a
			// commit's fan-out leaves cores to commits; the sends, which
			// wait on clients, come after it.
			s.e.fanout <- struct{}{}
			s.batching = true
			s.catchUp(pending)
			s.batching = false
			<-s.e.fanout
			out := s.outbox
			s.outbox = nil
			for _, o := range out {
				s.emitShared(o.r, o.shared)
			}
		}
	}
}

func (s *ListenStream) emit(r *pb.ListenResponse) { s.emitShared(r, false) }

func (s *ListenStream) emitShared(r *pb.ListenResponse, shared bool) {
	if s.failed {
		return
	}
	if s.batching {
		s.outbox = append(s.outbox, outResponse{r, shared})
		return
	}
	if err := s.send(r, shared); err != nil {
		s.failed = true
		s.mu.Lock()
		s.stopLocked()
		s.mu.Unlock()
	}
}

func targetChange(kind pb.TargetChange_TargetChangeType, ids ...int32) *pb.ListenResponse {
	return &pb.ListenResponse{ResponseType: &pb.ListenResponse_TargetChange{TargetChange: &pb.TargetChange{TargetChangeType: kind, TargetIds: ids}}}
}

func (s *ListenStream) onRequest(lr listenRequest) {
	req := lr.req
	switch r := req.GetTargetChange().(type) {
	case *pb.ListenRequest_AddTarget:
		s.addTarget(req.GetDatabase(), r.AddTarget, lr.pipeline, lr.scope)
	case *pb.ListenRequest_RemoveTarget:
		s.drop(r.RemoveTarget)
		s.emit(targetChange(pb.TargetChange_REMOVE, r.RemoveTarget))
	}
}

// drop forgets the target with id, if there is one.
func (s *ListenStream) drop(id int32) {
	if t := s.targets[id]; t != nil {
		s.e.targets.remove(t)
		delete(s.targets, id)
	}
}

// fail removes the target with id, telling the client why.
func (s *ListenStream) fail(id int32, err error) {
	s.drop(id)
	code, _, _ := errs.KindOf(err).Status()
	r := targetChange(pb.TargetChange_REMOVE, id)
	r.GetTargetChange().Cause = &status.Status{Code: int32(code), Message: err.Error()}
	s.emit(r)
}

func (s *ListenStream) addTarget(database string, t *pb.Target, read PipelineRead, scope PipelineScope) {
	s.drop(t.GetTargetId())
	lt := &listenTarget{s: s, id: t.GetTargetId(), current: map[string]*timestamppb.Timestamp{}}
	targetType := t.GetTargetType()
	if read != nil {
		targetType = nil
	}
	switch tt := targetType.(type) {
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
		lt.plan, lt.database = p, p.parent.Database
		lt.window = p.query.GetLimit() != nil || p.query.GetOffset() > 0
		if len(p.parent.Path) > 0 {
			lt.prefix = strings.Join(p.parent.Path, "/") + "/"
		}
	case *pb.Target_Documents:
		for _, name := range tt.Documents.GetDocuments() {
			n, err := ParseDocumentName(name)
			if err == nil && lt.database != "" && n.Database != lt.database {
				err = errorf(errs.InvalidArgument, "The documents of a target must be in one database.")
			}
			if err != nil {
				s.fail(lt.id, err)
				return
			}
			lt.database = n.Database
			lt.names = append(lt.names, n)
			lt.paths = append(lt.paths, strings.Join(n.Path, "/"))
		}
	default:
		if read == nil {
			s.fail(lt.id, errorf(errs.InvalidArgument, "A target must be a query or documents."))
			return
		}
		if _, err := ParseDatabase(database); err != nil {
			s.fail(lt.id, err)
			return
		}
		lt.pipeline, lt.scope, lt.database, lt.window = read, scope, database, true
	}
	if lt.plan != nil {
		s.e.ensureIndexes(lt.plan)
	}
	// Registered before the state is read: a commit published from now on
	// marks the target changed, and one published before is in the state.
	s.e.targets.add(lt)
	s.targets[lt.id] = lt
	resumeAt, resumed := resumeTime(t)
	s.e.mu.RLock()
	snapshotTime := s.e.readTimeLocked()     // the state docs show, so a resume from it misses nothing
	var docs, before map[string]*pb.Document // before: the target at resumeAt, when the history has it
	resumable := resumed && s.e.checkReadTime(resumeAt) == nil
	if lt.pipeline == nil {
		docs = s.e.targetDocs(lt, s.e.readAt(time.Time{}))
		if resumable {
			before = s.e.targetDocs(lt, s.e.readAt(resumeAt))
		}
	}
	s.e.mu.RUnlock()
	if lt.pipeline != nil { // a pipeline reads through the engine's API, outside e.mu
		var err error
		docs, err = lt.pipelineDocs(snapshotTime)
		if err == nil && resumable {
			before, err = lt.pipelineDocs(resumeAt)
		}
		if err != nil {
			s.fail(lt.id, err)
			return
		}
	}
	if lt.names != nil {
		for _, n := range lt.names {
			if err := s.e.check(context.Background(), s.caller, Access{Method: MethodGet, Name: n, Existing: docs[n.String()]}); err != nil {
				s.fail(lt.id, err)
				return
			}
		}
	}
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
	if resumed && (lt.plan != nil || lt.pipeline != nil || len(lt.names) == 1) {
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

// pipelineDocs runs a pipeline target's pipeline as of at; e.mu is not
// held.
func (t *listenTarget) pipelineDocs(at time.Time) (map[string]*pb.Document, error) {
	docs, err := t.pipeline(at)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*pb.Document, len(docs))
	for _, d := range docs {
		out[d.Name] = d
	}
	return out, nil
}

// targetState is what catching up read of one target: the documents in
// its results among those it looked at, and which of those exist at all.
type targetState struct {
	t      *listenTarget
	full   bool                    // docs is the whole result set
	names  []string                // the documents looked at (not full)
	docs   map[string]*pb.Document // by name: in the results
	exists map[string]bool         // by name, for documents looked at and not in the results
}

// catchUp sends what changed in the pending targets, read at the latest
// durable state, and a global NO_CHANGE with that read time. A document
// target whose document changed is judged by the rules again.
func (s *ListenStream) catchUp(pending []pendingTarget) {
	slices.SortFunc(pending, func(a, b pendingTarget) int { return int(a.t.id) - int(b.t.id) })
	e := s.e
	states := make([]targetState, 0, len(pending))
	var pipelines []*listenTarget
	e.mu.RLock()
	at := e.readAt(time.Time{})
	snapshotTime := e.readTimeLocked()
	for _, p := range pending {
		t := p.t
		if s.targets[t.id] != t {
			continue // removed meanwhile
		}
		if t.pipeline != nil {
			pipelines = append(pipelines, t) // read below, outside e.mu
			continue
		}
		st := targetState{t: t, full: p.rescan, exists: map[string]bool{}}
		if p.rescan {
			st.docs = e.targetDocs(t, at)
			for name := range t.current {
				if st.docs[name] == nil {
					n, _ := ParseDocumentName(name)
					st.exists[name] = e.lookupAt(n, at) != nil
				}
			}
		} else {
			st.docs = map[string]*pb.Document{}
			for _, path := range p.paths {
				n := Name{Database: t.database, Path: strings.Split(path, "/")}
				name := n.String()
				doc := e.lookupShared(t.database, path, at)
				st.names = append(st.names, name)
				if doc != nil && (t.plan == nil || t.admits(path, doc)) {
					st.docs[name] = doc
				} else {
					st.exists[name] = doc != nil
				}
			}
		}
		states = append(states, st)
	}
	e.mu.RUnlock()
	states = append(states, s.readPipelines(pipelines, snapshotTime)...)
	if len(states) == 0 {
		return
	}
	updates := map[string]*docUpdate{}
	get := func(name string) *docUpdate {
		u := updates[name]
		if u == nil {
			u = &docUpdate{}
			updates[name] = u
		}
		return u
	}
	for _, st := range states {
		t := st.t
		if t.names != nil && !s.allowed(st) {
			continue
		}
		for name, doc := range st.docs {
			if old, ok := t.current[name]; !ok || !proto.Equal(old, doc.UpdateTime) {
				u := get(name)
				u.doc = doc
				u.added = append(u.added, t.id)
				t.current[name] = doc.UpdateTime
			}
		}
		gone := func(name string) {
			if _, ok := t.current[name]; ok {
				u := get(name)
				u.removed = append(u.removed, t.id)
				u.deleted = !st.exists[name]
				delete(t.current, name)
			}
		}
		if st.full {
			for name := range t.current {
				if st.docs[name] == nil {
					gone(name)
				}
			}
		} else {
			for _, name := range st.names {
				if st.docs[name] == nil {
					gone(name)
				}
			}
		}
	}
	readTime := s.readTime(snapshotTime)
	for _, name := range sortedKeys(updates) {
		u := updates[name]
		key := sharedKey{doc: u.doc, ids: idsKey(u.added, u.removed)}
		switch {
		case u.doc != nil:
			key.kind = 'c'
			s.emitShared(e.listenShared.Get(key, func() *pb.ListenResponse {
				return &pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentChange{DocumentChange: &pb.DocumentChange{Document: u.doc, TargetIds: u.added, RemovedTargetIds: u.removed}}}
			}), true)
		case u.deleted:
			key.kind, key.name, key.readTime = 'd', name, readTime.UnixMicro()
			s.emitShared(e.listenShared.Get(key, func() *pb.ListenResponse {
				return &pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentDelete{DocumentDelete: &pb.DocumentDelete{Document: name, RemovedTargetIds: u.removed, ReadTime: timestamppb.New(readTime)}}}
			}), true)
		default:
			key.kind, key.name, key.readTime = 'r', name, readTime.UnixMicro()
			s.emitShared(e.listenShared.Get(key, func() *pb.ListenResponse {
				return &pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentRemove{DocumentRemove: &pb.DocumentRemove{Document: name, RemovedTargetIds: u.removed, ReadTime: timestamppb.New(readTime)}}}
			}), true)
		}
	}
	s.emitShared(e.listenShared.Get(sharedKey{kind: 'g', readTime: readTime.UnixMicro()}, func() *pb.ListenResponse { return globalChange(readTime) }), true)
}

// readPipelines reads pipeline targets whole as of snapshotTime, removing
// those whose pipeline now fails (the rules, say) with its error.
func (s *ListenStream) readPipelines(targets []*listenTarget, snapshotTime time.Time) []targetState {
	var states []targetState
	for _, t := range targets {
		docs, err := t.pipelineDocs(snapshotTime)
		if err != nil {
			s.fail(t.id, err)
			continue
		}
		st := targetState{t: t, full: true, docs: docs, exists: map[string]bool{}}
		s.e.mu.RLock()
		at := s.e.readAt(snapshotTime)
		for name := range t.current {
			if docs[name] == nil {
				n, _ := ParseDocumentName(name)
				st.exists[name] = s.e.lookupAt(n, at) != nil
			}
		}
		s.e.mu.RUnlock()
		states = append(states, st)
	}
	return states
}

// sharedKey names the content of a Listen response that streams share: a
// document change by the document version (decoded once for all streams,
// so equal versions are one pointer) and target ids, a delete or remove by
// name, target ids and read time, a global change by read time.
type sharedKey struct {
	kind     byte
	doc      *pb.Document
	name     string
	ids      string
	readTime int64
}

// idsKey encodes the target ids a document was added to and removed from.
func idsKey(added, removed []int32) string {
	b := make([]byte, 0, 4*(len(added)+len(removed))+1)
	for _, id := range added {
		b = binary.AppendVarint(b, int64(id))
	}
	b = append(b, '/')
	for _, id := range removed {
		b = binary.AppendVarint(b, int64(id))
	}
	return string(b)
}

// lookupShared is lookupAt for the streams a commit fans out to: a version
// of a document is decoded once for all of them, so their responses share
// it. e.mu is held.
func (e *Engine) lookupShared(database, path string, t time.Time) *pb.Document {
	stored, ok := storedDoc{}, false
	if !e.latest(t) {
		stored, ok = e.hist.storedAsOf(database, path, t)
	}
	if !ok {
		if d := e.dbs[database]; d != nil {
			stored = d.docs[path]
		}
	}
	if stored.doc != nil || stored.encoded == nil {
		return stored.doc
	}
	return e.decoded.Get(unsafe.SliceData(stored.encoded), func() *pb.Document { return stored.decode(path) })
}

// admits reports whether doc, at path, is in a query target's results
// (for a query without limit or offset, whose results do not depend on the
// other documents).
func (t *listenTarget) admits(path string, doc *pb.Document) bool {
	w := newWindow(t.plan, 0)
	return w.inScope(path) && t.plan.matches(doc) && w.withinCursors(doc)
}

// allowed judges a document target again for the documents that changed,
// as production does: one the rules no longer let the caller read removes
// the target with PERMISSION_DENIED. It reports whether the target stays.
func (s *ListenStream) allowed(st targetState) bool {
	names := st.names
	if st.full {
		names = nil
		for _, n := range st.t.names {
			names = append(names, n.String())
		}
	}
	for _, name := range names {
		n, err := ParseDocumentName(name)
		if err != nil {
			continue
		}
		if err := s.e.check(context.Background(), s.caller, Access{Method: MethodGet, Name: n, Existing: st.docs[name]}); err != nil {
			s.fail(st.t.id, err)
			return false
		}
	}
	return true
}

// recheckTargets judges every target again as the rules now in force
// decide, removing with the rules' error those they no longer allow.
func (s *ListenStream) recheckTargets() {
	for _, id := range slices.Sorted(maps.Keys(s.targets)) {
		t := s.targets[id]
		var err error
		if t.plan != nil {
			err = s.e.check(context.Background(), s.caller, Access{Method: MethodList, Name: collectionName(t.plan), Query: t.plan.query})
		} else if t.pipeline != nil {
			_, err = t.pipeline(time.Time{})
		} else {
			s.e.mu.RLock()
			docs := s.e.targetDocs(t, s.e.readAt(time.Time{}))
			s.e.mu.RUnlock()
			for _, n := range t.names {
				if err = s.e.check(context.Background(), s.caller, Access{Method: MethodGet, Name: n, Existing: docs[n.String()]}); err != nil {
					break
				}
			}
		}
		if err != nil {
			s.fail(id, err)
		}
	}
}

// RecheckListeners has every open listen stream judge its targets again
// with the rules in force now (call it when they change): a target they no
// longer allow is removed with PERMISSION_DENIED, as in production.
func (e *Engine) RecheckListeners() {
	e.targets.eachStream(func(s *ListenStream) { s.requestRecheck() })
}

type docUpdate struct {
	doc     *pb.Document
	added   []int32
	removed []int32
	deleted bool
}
