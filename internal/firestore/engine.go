package firestore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Limits Firestore enforces on writes.
const (
	MaxWritesPerCommit = 500
	MaxDocumentBytes   = 1 << 20
	MaxDepth           = 20
	MaxRequestBytes    = 10 << 20 // of a commit's writes, encoded
)

// checkWrites refuses a commit (or batch write) of more writes, or more
// bytes, than production takes in one request.
func checkWrites(writes []*pb.Write) error {
	if len(writes) > MaxWritesPerCommit {
		return errorf(errs.InvalidArgument, "maximum %d writes allowed per request", MaxWritesPerCommit)
	}
	size := 0
	for _, w := range writes {
		size += proto.Size(w)
	}
	if size > MaxRequestBytes {
		return errorf(errs.InvalidArgument, "Request payload size exceeds the limit: %d bytes.", MaxRequestBytes)
	}
	return nil
}

// Engine is the Firestore engine. It is safe for concurrent use.
type Engine struct {
	mu       sync.RWMutex
	ixMu     sync.Mutex // guards building and registering indexes under a read lock
	dbs      map[string]*database
	lastTime time.Time
	// queued is the time of the newest commit handed to the pipeline and
	// durable (microseconds since the epoch, written by the pipeline) that
	// of the newest one on disk: readers see nothing after durable.
	queued      time.Time
	durable     atomic.Int64
	txns        map[string]*transaction
	locks       *lockTable    // pessimistic locks of read-write transactions
	hist        history       // recent commits, for reads at a past read time
	stopTrim    chan struct{} // stops the history's trim timer
	closeOnce   sync.Once
	log         *commitLog // nil in memory
	pipeline    *pipeline
	authorize   Authorizer
	indexPolicy indexPolicy // firestore.indexes.json: declared, enforced, missing
	editions    atomic.Pointer[editions]
	// targets finds the listen targets each published commit may change.
	targets      *targetIndex
	listenShared Recent[sharedKey, *pb.ListenResponse] // Listen responses the streams of a fan-out share
	decoded      Recent[*byte, *pb.Document]           // documents decoded for a fan-out, by their stored bytes
	fanout       chan struct{}                         // turns of the streams catching up (half the cores)
}

// database holds the documents of one projects/{p}/databases/{d}.
type database struct {
	name     string
	docs     docTable                             // by path under documents/
	indexes  map[string]map[indexSpec]*fieldIndex // by collection id; built on first use
	building map[indexSpec]*indexBuild            // indexes being built without the lock
	vectors  map[vectorKey]*vectorIndex           // flat vector indexes; built on first use
}

// Change is one document change of a commit, as listeners and triggers see it.
type Change struct {
	Database string
	Path     string
	Old, New *pb.Document // nil when absent before / after

	encoded    []byte // New as the document table encoded it, which the commit log reuses
	oldEncoded []byte // Old as the document table held it, which the history keeps
}

// Commit is a committed batch of changes.
type Commit struct {
	Time    time.Time
	Changes []Change
	// Import marks the changes of an import (loupe data import, the
	// console's archive import): listeners see them, triggers do not, as
	// with --import.
	Import bool
	// Caller is who made the commit (the owner, a user, nobody); nil for
	// loupe's own changes (a clear, an import).
	Caller *identity.Principal
}

// Options configure an engine.
type Options struct {
	// Dir is the data folder; "" keeps everything in memory.
	Dir string
	// Authorizer judges every request not made by the owner; nil allows all.
	Authorizer Authorizer
	// HistoryBudget bounds the bytes of old document versions kept for
	// reads at a past read time (0: 64 MiB).
	HistoryBudget int64
	// HistoryWindow is how far back reads may go (0: an hour, as Firestore's
	// version retention).
	HistoryWindow time.Duration
}

// Open creates an engine, replaying the data folder when there is one.
func Open(opts Options) (*Engine, error) {
	e := &Engine{dbs: map[string]*database{}, txns: map[string]*transaction{}, locks: newLockTable(), authorize: opts.Authorizer, targets: newTargetIndex(),
		stopTrim: make(chan struct{})}
	e.hist.window, e.hist.budget = cmp.Or(opts.HistoryWindow, defaultHistoryWindow), cmp.Or(opts.HistoryBudget, defaultHistoryBudget)
	// A cached value may be a 1 MiB document: keep few (each cache starts
	// over when full, and a fan-out looks its values up right away).
	e.decoded.Max, e.listenShared.Max = 128, 128
	e.fanout = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))
	if opts.Dir != "" {
		gcPercent := debug.SetGCPercent(400) // replay allocates mostly what it keeps: collect less often
		var r replayer
		log, err := openCommitLog(opts.Dir, replayFuncs{snapshot: r.snapshot(e), commit: r.commit(e), fold: r.fold})
		debug.SetGCPercent(gcPercent)
		if err != nil {
			return nil, err
		}
		e.log = log
		r.setHorizon(e)
		e.markDurable(e.lastTime)
		// Replaying leaves decoding garbage behind: hand it back to the OS
		// now rather than holding it until later collections.
		debug.FreeOSMemory()
		if log.size() > compactAt {
			if err := log.rewrite(e.dbs, e.lastTime); err != nil {
				return nil, fmt.Errorf("compact firestore log: %w", err)
			}
		}
	}
	e.pipeline = newPipeline(e.log, &e.mu, e.markDurable, e.undo)
	e.pipeline.subscribe(e.targets.publish)
	go e.trimLoop(e.stopTrim, trimEvery(e.hist.window))
	return e, nil
}

// Close flushes and closes the log.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() { close(e.stopTrim) })
	e.pipeline.close()
	if e.log != nil {
		return e.log.close()
	}
	return nil
}

// Subscribe registers f to receive every commit after it is durable, in
// commit order, on one goroutine; f must not block for long. The returned
// function unsubscribes.
func (e *Engine) Subscribe(f func(Commit)) (unsubscribe func()) {
	return e.pipeline.subscribe(f)
}

// db returns the database named name, created empty when absent.
func (e *Engine) db(name string) *database {
	d := e.dbs[name]
	if d == nil {
		d = newDatabase(name)
		e.dbs[name] = d
	}
	return d
}

// newDatabase returns an empty database with an empty collection-order
// index, which every write then keeps in step.
func newDatabase(name string) *database {
	d := &database{name: name, docs: docTable{}}
	d.install(newFieldIndex(byCollection, nil))
	return d
}

// nextTime returns a commit time after every earlier one, at microsecond
// precision as Firestore's.
func (e *Engine) nextTime() time.Time {
	t := time.Now().UTC().Truncate(time.Microsecond)
	if !t.After(e.lastTime) {
		t = e.lastTime.Add(time.Microsecond)
	}
	e.lastTime = t
	return t
}

// ReadTime is the current read time: the time of the last durable commit,
// or now.
func (e *Engine) ReadTime() time.Time {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.readTimeLocked()
}

// readTimeLocked is ReadTime for a caller holding e.mu.
func (e *Engine) readTimeLocked() time.Time {
	if v := e.visibleAt(); !v.IsZero() {
		return v
	}
	if e.lastTime.IsZero() {
		return time.Now().UTC().Truncate(time.Microsecond)
	}
	return e.lastTime
}

// markDurable records that every commit up to t is on disk.
func (e *Engine) markDurable(t time.Time) {
	us := t.UnixMicro()
	for {
		old := e.durable.Load()
		if us <= old || e.durable.CompareAndSwap(old, us) {
			return
		}
	}
}

// visibleAt returns the time readers read at: zero (the latest state) when
// every commit in memory is durable or there is no data dir, else the time
// of the last durable commit, so that no reader sees a commit that a failed
// fsync could undo or a crash lose; e.mu is held.
func (e *Engine) visibleAt() time.Time {
	if e.log == nil {
		return time.Time{}
	}
	d := time.UnixMicro(e.durable.Load()).UTC()
	if !d.Before(e.queued) {
		return time.Time{}
	}
	return d
}

// readAt returns the time a read asking for at (zero: the latest state)
// reads at: never after the last durable commit; e.mu is held.
func (e *Engine) readAt(at time.Time) time.Time {
	if v := e.visibleAt(); !v.IsZero() && (at.IsZero() || at.After(v)) {
		return v
	}
	return at
}

// Get returns a document, or nil when it does not exist.
func (e *Engine) Get(ctx context.Context, caller identity.Principal, name string) (*pb.Document, error) {
	n, err := ParseDocumentName(name)
	if err != nil {
		return nil, err
	}
	e.mu.RLock()
	doc := e.lookupAt(n, e.readAt(time.Time{}))
	e.mu.RUnlock()
	if err := e.check(ctx, caller, Access{Method: MethodGet, Name: n, Existing: doc}); err != nil {
		return nil, err
	}
	return doc, nil
}

// BatchGet returns the named documents in request order (nil for missing)
// in the state c selects, recording their versions in a read-write
// transaction, and the read time.
func (e *Engine) BatchGet(ctx context.Context, caller identity.Principal, names []string, c Consistency) ([]*pb.Document, time.Time, error) {
	parsed := make([]Name, len(names))
	for i, name := range names {
		n, err := ParseDocumentName(name)
		if err != nil {
			return nil, time.Time{}, err
		}
		parsed[i] = n
	}
	if err := e.lockReads(ctx, c, names); err != nil {
		return nil, time.Time{}, err
	}
	unlock := e.lockFor(c)
	txn, at, err := e.readState(c)
	if err != nil {
		unlock()
		return nil, time.Time{}, err
	}
	docs := make([]*pb.Document, len(parsed))
	for i, n := range parsed {
		docs[i] = e.lookupAt(n, at)
		if txn != nil {
			txn.read(n.String(), docs[i])
		}
	}
	readTime := e.lastTime
	if !at.IsZero() {
		readTime = at
	}
	unlock()
	for i, n := range parsed {
		if err := e.check(ctx, caller, Access{Method: MethodGet, Name: n, Existing: docs[i]}); err != nil {
			return nil, time.Time{}, err
		}
	}
	if readTime.IsZero() {
		readTime = time.Now().UTC().Truncate(time.Microsecond)
	}
	return docs, readTime, nil
}

func (e *Engine) lookup(n Name) *pb.Document {
	d := e.dbs[n.Database]
	if d == nil {
		return nil
	}
	return d.docs.get(strings.Join(n.Path, "/"))
}

// WriteResult is the outcome of one write in a commit.
type WriteResult struct {
	UpdateTime       time.Time
	TransformResults []*pb.Value
}

// CommitResult is the outcome of a commit.
type CommitResult struct {
	Time    time.Time
	Results []WriteResult
}

// Commit applies writes atomically: all of them or, on any error, none.
// With a transaction id, the commit fails with ABORTED when a document the
// transaction read has changed since, and applies the writes the
// transaction staged (StageWrites) before writes (Results has an entry
// for each of writes only). It returns once the commit is durable.
func (e *Engine) Commit(ctx context.Context, caller identity.Principal, database string, writes []*pb.Write, txnID []byte) (*CommitResult, error) {
	staged := 0
	if txnID != nil {
		all := e.withStaged(txnID, writes)
		staged = len(all) - len(writes)
		writes = all
	}
	if err := checkWrites(writes); err != nil {
		return nil, err
	}
	if _, err := ParseDatabase(database); err != nil {
		return nil, err
	}
	owner, err := e.lockWrites(ctx, writes, txnID)
	if err != nil {
		return nil, err
	}
	if owner != nil {
		defer e.locks.release(owner)
	}
	e.mu.Lock()
	if txnID != nil {
		txn, err := e.txn(txnID)
		if err != nil {
			e.mu.Unlock()
			return nil, err
		}
		delete(e.txns, string(txnID))
		if err := txn.validate(e); err != nil {
			e.mu.Unlock()
			return nil, err
		}
		if txn.readOnly && len(writes) > 0 {
			e.mu.Unlock()
			return nil, errorf(errs.InvalidArgument, "Cannot modify entities in a read-only transaction.")
		}
	}
	res, commit, err := e.apply(ctx, caller, database, writes)
	if err != nil {
		// The error may come from a commit not yet durable (a precondition
		// it failed, say): answer once that one is, or was undone.
		settled := e.settle()
		e.mu.Unlock()
		if <-settled != nil {
			if txnID != nil {
				return nil, errorf(errs.Aborted, "The transaction read data that could not be made durable; retry it.")
			}
			if owner != nil {
				e.locks.release(owner) // the retry takes them again
			}
			return e.Commit(ctx, caller, database, writes, nil)
		}
		return nil, err
	}
	var release func() // the locks go as soon as the commit is durable
	if owner != nil {
		release = func() { e.locks.release(owner) }
	}
	done := e.enqueue(commit, release)
	e.mu.Unlock()
	if err := <-done; err != nil {
		return nil, durabilityError(err)
	}
	res.Results = res.Results[staged:]
	return res, nil
}

// settle returns a channel that yields nil once every commit applied so
// far is durable, or the error that made the pipeline undo them; e.mu is
// held.
func (e *Engine) settle() <-chan error {
	if e.visibleAt().IsZero() {
		done := make(chan error, 1)
		done <- nil
		return done
	}
	return e.pipeline.enqueue(Commit{Time: e.queued}, nil)
}

// enqueue records an applied commit in the history and hands it to the
// pipeline, which calls onDurable (when not nil) once it is durable; e.mu
// is held. Readers see it once it is durable.
func (e *Engine) enqueue(c Commit, onDurable func()) <-chan error {
	e.hist.add(c)
	e.trimHistory(time.Now())
	e.queued = c.Time
	return e.pipeline.enqueue(c, onDurable)
}

// durabilityError is what a writer sees when its commit could not be made
// durable: RESOURCE_EXHAUSTED when the disk is full, UNAVAILABLE otherwise.
// Either way the commit was undone and nothing of it is visible. The cause
// (which names the log's file) stays out of the message a client sees.
func durabilityError(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return &errs.Error{Kind: errs.ResourceExhausted, Message: "The data dir is full; the commit was not made.", Cause: err}
	}
	return &errs.Error{Kind: errs.Unavailable, Message: "The commit could not be made durable and was not made.", Cause: err}
}

// undo reverts the commits that could not be made durable (every one not
// yet durable, newest first) in memory, last change first, and forgets
// them, so that memory again holds exactly what is on disk; e.mu is held.
func (e *Engine) undo(failed []Commit) {
	for _, c := range failed {
		for i := len(c.Changes) - 1; i >= 0; i-- {
			ch := c.Changes[i]
			d := e.db(ch.Database)
			if ch.Old == nil {
				delete(d.docs, ch.Path)
			} else {
				d.docs.set(ch.Path, ch.Old)
			}
			d.reindex(ch.Path, ch.New, ch.Old)
		}
	}
	durable := time.UnixMicro(e.durable.Load()).UTC()
	e.hist.dropAfter(durable)
	e.queued = durable
}

// apply computes and installs the effect of writes; e.mu must be held.
func (e *Engine) apply(ctx context.Context, caller identity.Principal, database string, writes []*pb.Write) (*CommitResult, Commit, error) {
	t := e.nextTime()
	ts := timestamppb.New(t)
	working := map[string]*pb.Document{} // path → state after the writes so far (nil: deleted)
	present := map[string]bool{}
	original := map[string]*pb.Document{}
	var order []string
	results := make([]WriteResult, len(writes))
	current := func(n Name) (*pb.Document, bool) {
		key := n.String()
		if present[key] {
			return working[key], true
		}
		doc := e.lookup(n)
		original[key] = doc
		return doc, false
	}
	var accesses []Access
	for i, w := range writes {
		n, newDoc, res, access, err := applyWrite(w, database, e.Edition(database) == EditionEnterprise, current, ts)
		if err != nil {
			return nil, Commit{}, err
		}
		key := n.String()
		if !present[key] {
			order = append(order, key)
		}
		if access.Method != "" {
			accesses = append(accesses, access)
		}
		present[key] = true
		working[key] = newDoc
		results[i] = res
	}
	if len(accesses) > 0 && e.authorize != nil && !caller.Owner {
		// e.mu is held: the authorizer reads through these lock-free views.
		before := func(name string) *pb.Document {
			n, err := ParseDocumentName(name)
			if err != nil {
				return nil
			}
			return e.lookup(n)
		}
		view := func(name string) *pb.Document {
			if present[name] {
				return working[name]
			}
			return before(name)
		}
		for _, a := range accesses {
			a.Caller = caller
			a.Before = before
			a.After = view
			a.Batch = len(writes) > 1
			a.Time = t
			if err := e.authorize.Authorize(ctx, a); err != nil {
				return nil, Commit{}, err
			}
		}
	}
	commit := Commit{Time: t, Caller: &caller}
	for _, key := range order {
		n, _ := ParseDocumentName(key)
		old, doc := original[key], working[key]
		if doc != nil && old != nil && fieldsEqual(doc.Fields, old.Fields) {
			continue // a write that changes nothing keeps the document's times
		}
		if doc == nil && old == nil {
			continue
		}
		d := e.db(n.Database)
		path := strings.Join(n.Path, "/")
		var encoded []byte
		oldEncoded := d.docs[path].encoded
		if doc == nil {
			delete(d.docs, path)
			d.reindex(path, old, nil)
		} else {
			doc.UpdateTime = ts
			if old != nil {
				doc.CreateTime = old.CreateTime
			} else {
				doc.CreateTime = ts
			}
			encoded = d.docs.set(path, doc)
			d.reindex(path, old, doc)
		}
		commit.Changes = append(commit.Changes, Change{Database: d.name, Path: path, Old: old, New: doc, encoded: encoded, oldEncoded: oldEncoded}) // d.name: one copy of the name for every change
	}
	for i, w := range writes {
		if w.GetDelete() != "" {
			continue // a delete's result carries no update time
		}
		results[i].UpdateTime = t
		if n, err := ParseDocumentName(writeName(w)); err == nil {
			if d := e.dbs[n.Database]; d != nil {
				if s, ok := d.docs[strings.Join(n.Path, "/")]; ok {
					results[i].UpdateTime = s.updateTime()
				}
			}
		}
	}
	return &CommitResult{Time: t, Results: results}, commit, nil
}

func fieldsEqual(a, b map[string]*pb.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !proto.Equal(v, w) {
			return false
		}
	}
	return true
}

func writeName(w *pb.Write) string {
	switch op := w.GetOperation().(type) {
	case *pb.Write_Update:
		return op.Update.GetName()
	case *pb.Write_Delete:
		return op.Delete
	case *pb.Write_Transform:
		return op.Transform.GetDocument()
	}
	name, _ := verifyOf(w)
	return name
}

// replay installs documents read from the data folder at Open, keeping
// them encoded until they are read.
func (e *Engine) replay(name string, t time.Time, puts []encodedDoc, dels []string) {
	d := e.dbs[name]
	if d == nil {
		// Indexed once the folder is open, by BuildIndexes or on first use.
		d = &database{name: name, docs: docTable{}}
		e.dbs[name] = d
	}
	for _, doc := range puts {
		d.docs[doc.path] = storedDoc{encoded: doc.raw}
	}
	for _, p := range dels {
		delete(d.docs, p)
	}
	if t.After(e.lastTime) {
		e.lastTime = t
	}
}

// Clear deletes every document of a database (what test libraries call);
// listeners see the deletes.
func (e *Engine) Clear(database string) error {
	if _, err := ParseDatabase(database); err != nil {
		return err
	}
	e.mu.Lock()
	d := e.dbs[database]
	if d == nil || len(d.docs) == 0 {
		e.mu.Unlock()
		return nil
	}
	commit := Commit{Time: e.nextTime()}
	paths := make([]string, 0, len(d.docs))
	for p := range d.docs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		commit.Changes = append(commit.Changes, Change{Database: database, Path: p, Old: d.docs.get(p), oldEncoded: d.docs[p].encoded})
	}
	*d = *newDatabase(database) // an index build under way sees it is no longer wanted
	done := e.enqueue(commit, nil)
	e.mu.Unlock()
	if err := <-done; err != nil {
		return durabilityError(err)
	}
	return nil
}

// BatchWrite applies writes each on its own, not atomically, as
// google.firestore.v1.Firestore.BatchWrite does: the answer has each
// write's result and status, an error status for one that was refused.
func (e *Engine) BatchWrite(ctx context.Context, caller identity.Principal, database string, writes []*pb.Write) (*pb.BatchWriteResponse, error) {
	if err := checkWrites(writes); err != nil {
		return nil, err
	}
	if err := e.checkBatchWrites(database, writes); err != nil {
		return nil, err
	}
	resp := &pb.BatchWriteResponse{}
	for _, w := range writes {
		res, err := e.Commit(ctx, caller, database, []*pb.Write{w}, nil)
		if err != nil {
			code, _, _ := errs.KindOf(err).Status()
			resp.WriteResults = append(resp.WriteResults, &pb.WriteResult{})
			resp.Status = append(resp.Status, &statuspb.Status{Code: int32(code), Message: err.Error()})
			continue
		}
		resp.WriteResults = append(resp.WriteResults, WriteResults(res)[0])
		resp.Status = append(resp.Status, &statuspb.Status{})
	}
	return resp, nil
}

// checkBatchWrites refuses a batch write as a whole, as production and the
// official emulator do, when one of its writes is invalid whatever the
// documents hold (a reserved id, a name outside the database, a bad field
// path or value) or when it writes a document twice; only what depends on
// the stored state (preconditions, rules) is a per-write status. A write is
// judged against a missing document: what is invalid there is invalid
// everywhere, since a stored document only adds to what a write yields.
func (e *Engine) checkBatchWrites(database string, writes []*pb.Write) error {
	missing := func(Name) (*pb.Document, bool) { return nil, false }
	bson := e.Edition(database) == EditionEnterprise
	now := timestamppb.Now()
	seen := make(map[string]bool, len(writes))
	for _, w := range writes {
		_, _, _, _, err := applyWrite(w, database, bson, missing, now)
		if errs.KindOf(err) == errs.InvalidArgument {
			return err
		}
		name := writeName(w)
		if seen[name] {
			return errorf(errs.InvalidArgument, "the same document cannot be written more than once in a single request")
		}
		seen[name] = true
	}
	return nil
}
