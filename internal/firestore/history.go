package firestore

import (
	"bytes"
	"cmp"
	"sort"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Bounds of the version history that reads at a past read time use. As in
// Firestore, whose version retention is an hour (seven days with
// point-in-time recovery, which loupe does not emulate), a read may go back
// an hour; the old versions that takes are kept within a memory budget
// (Options.HistoryBudget), and a burst of writes that exceeds it shortens
// the reach: the oldest commits are forgotten first, and a read before the
// new horizon fails with FAILED_PRECONDITION saying so.
const (
	defaultHistoryWindow = time.Hour
	defaultHistoryBudget = 64 << 20
	// changeOverhead is what the history counts for one change besides the
	// old version's bytes: its path, database and slice entry.
	changeOverhead = 96
)

// history keeps the recent commits, each change with the document's
// previous version as its stored encoding (nil when absent), so that a
// reader can undo every commit after a read time. New versions are not
// kept: a reader never needs them.
type history struct {
	commits []pastCommit // oldest first
	bytes   int64        // of every kept change, overhead included
	// horizon is the earliest read time that can be served: every commit
	// after it is kept. Zero: every commit since the database was empty.
	horizon time.Time
	// cut is set when the budget moved the horizon before the window did.
	cut    bool
	window time.Duration
	budget int64
}

type pastCommit struct {
	time    time.Time
	changes []pastChange
	bytes   int64
}

type pastChange struct {
	database, path string
	old            []byte // the previous version, encoded; nil when absent
}

// old returns the previous version, decoded.
func (c pastChange) doc() *pb.Document {
	if c.old == nil {
		return nil
	}
	return storedDoc{encoded: c.old}.decode(c.path)
}

// add records a commit. Its changes' oldEncoded (or, when missing, their
// Old encoded afresh) are what the history keeps.
func (h *history) add(c Commit) {
	if len(c.Changes) == 0 {
		return
	}
	pc := pastCommit{time: c.Time, changes: make([]pastChange, len(c.Changes))}
	for i, ch := range c.Changes {
		old := ch.oldEncoded
		if old == nil && ch.Old != nil {
			old, _ = storedDoc{doc: ch.Old}.bytes()
		}
		pc.changes[i] = pastChange{database: ch.Database, path: ch.Path, old: old}
		pc.bytes += int64(len(old)+len(ch.Path)) + changeOverhead
	}
	h.commits = append(h.commits, pc)
	h.bytes += pc.bytes
}

// trim forgets the oldest commits while they are older than the window or
// the history is over budget, never one after keep (the last durable
// commit's time, or an open transaction's read time: readers need those).
func (h *history) trim(now, keep time.Time) {
	oldest := now.Add(-h.window)
	n := 0
	for n < len(h.commits) && !h.commits[n].time.After(keep) {
		c := h.commits[n]
		expired := c.time.Before(oldest)
		if !expired && h.bytes <= h.budget {
			break
		}
		h.cut = !expired
		h.horizon = c.time
		h.bytes -= c.bytes
		h.commits[n] = pastCommit{}
		n++
	}
	if n > 0 {
		h.commits = h.commits[n:]
	}
}

// needsTrim reports whether trim at now would forget anything, before the
// caller works out what it must keep.
func (h *history) needsTrim(now time.Time) bool {
	return len(h.commits) > 0 && (h.bytes > h.budget || h.commits[0].time.Before(now.Add(-h.window)))
}

// dropAfter forgets the commits after t (undone ones).
func (h *history) dropAfter(t time.Time) {
	later := h.after(t)
	for i := range later {
		h.bytes -= later[i].bytes
		later[i] = pastCommit{}
	}
	h.commits = h.commits[:len(h.commits)-len(later)]
}

// reset forgets everything: reads before t cannot be served.
func (h *history) reset(t time.Time) {
	*h = history{horizon: t, window: h.window, budget: h.budget}
}

// after returns the commits later than t.
func (h *history) after(t time.Time) []pastCommit {
	i := sort.Search(len(h.commits), func(i int) bool { return h.commits[i].time.After(t) })
	return h.commits[i:]
}

// asOf returns the state at t of the document at path when a later commit
// changed it (changed is false when the current state is the state at t).
func (h *history) asOf(database, path string, t time.Time) (doc *pb.Document, changed bool) {
	stored, changed := h.storedAsOf(database, path, t)
	return stored.decode(path), changed
}

// storedAsOf is asOf's document as stored, not decoded.
func (h *history) storedAsOf(database, path string, t time.Time) (stored storedDoc, changed bool) {
	for _, c := range h.after(t) {
		for _, ch := range c.changes {
			if ch.database == database && ch.path == path {
				return storedDoc{encoded: ch.old}, true
			}
		}
	}
	return storedDoc{}, false
}

// overlay returns the state at t (nil: absent) of every document of
// database that a later commit changed, by path.
func (h *history) overlay(database string, t time.Time) map[string]*pb.Document {
	out := map[string]*pb.Document{}
	for _, c := range h.after(t) {
		for _, ch := range c.changes {
			if _, seen := out[ch.path]; !seen && ch.database == database {
				out[ch.path] = ch.doc()
			}
		}
	}
	return out
}

// SetHistoryBudget bounds the bytes of old document versions kept for
// reads at a past read time (0: 64 MiB), trimming the history to it.
func (e *Engine) SetHistoryBudget(n int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hist.budget = cmp.Or(n, defaultHistoryBudget)
	e.trimHistory(time.Now())
}

// trimHistory trims the history as of now, keeping what the last durable
// commit and open read-only transactions need; e.mu is held.
func (e *Engine) trimHistory(now time.Time) {
	if !e.hist.needsTrim(now) {
		return
	}
	keep := time.UnixMicro(e.durable.Load()).UTC()
	for _, t := range e.txns {
		if t.readOnly && !t.readTime.IsZero() && t.readTime.Before(keep) && now.Before(t.expires) {
			keep = t.readTime
		}
	}
	e.hist.trim(now, keep)
}

// trimEvery is how often the history is trimmed when no commit arrives to
// trim it: a window's tenth, at most ten seconds.
func trimEvery(window time.Duration) time.Duration {
	return min(window/10, 10*time.Second)
}

// trimLoop trims the history every period until stop is closed, so that
// old versions go even when no later commit comes. (The period is given:
// reading e.hist here would race with an import's reset, which replaces
// the history under e.mu.)
func (e *Engine) trimLoop(stop <-chan struct{}, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			e.mu.Lock()
			e.trimHistory(now)
			e.mu.Unlock()
		}
	}
}

// Consistency selects the state a read sees: a transaction's (recording
// the versions read, or at the read-only transaction's read time), the
// state at a past read time, or, when zero, the latest state.
type Consistency struct {
	Transaction []byte
	ReadTime    time.Time
}

// lockFor takes the lock a read needs: exclusive when it records versions
// in a transaction, shared otherwise. It returns the unlock function.
func (e *Engine) lockFor(c Consistency) func() {
	if c.Transaction != nil {
		e.mu.Lock()
		return e.mu.Unlock
	}
	e.mu.RLock()
	return e.mu.RUnlock
}

// readState resolves c to the transaction to record reads in and the time
// to read at (zero: the latest state), never after the last durable commit;
// e.mu is held.
func (e *Engine) readState(c Consistency) (*transaction, time.Time, error) {
	at := c.ReadTime
	var txn *transaction
	if c.Transaction != nil {
		t, err := e.txn(c.Transaction)
		if err != nil {
			return nil, time.Time{}, err
		}
		if t.readOnly {
			at = t.readTime
		} else {
			txn = t
		}
	}
	if at.IsZero() {
		return txn, e.readAt(at), nil
	}
	if err := e.checkReadTime(at); err != nil {
		return nil, time.Time{}, err
	}
	return txn, e.readAt(at), nil
}

// checkReadTime fails for a read time the history cannot serve; e.mu is held.
func (e *Engine) checkReadTime(at time.Time) error {
	if now := time.Now(); at.After(now) && at.After(e.lastTime) {
		return errorf(errs.InvalidArgument, "read_time cannot be in the future")
	}
	if beyond := at.Before(time.Now().Add(-e.hist.window)); beyond || at.Before(e.hist.horizon) {
		if !beyond && e.hist.cut {
			return errorf(errs.FailedPrecondition, "The requested snapshot version is too old. Loupe keeps %d MiB of document versions (--history-budget), which now reach back to %s.",
				e.hist.budget>>20, e.hist.horizon.Format(time.RFC3339Nano))
		}
		return errorf(errs.FailedPrecondition, "The requested snapshot version is too old.")
	}
	return nil
}

// latest reports whether reading at t reads the latest state; e.mu is held.
func (e *Engine) latest(t time.Time) bool {
	return t.IsZero() || !t.Before(e.lastTime)
}

// lookupAt returns the document named n as of t; e.mu is held.
func (e *Engine) lookupAt(n Name, t time.Time) *pb.Document {
	if !e.latest(t) {
		if doc, changed := e.hist.asOf(n.Database, strings.Join(n.Path, "/"), t); changed {
			return doc
		}
	}
	return e.lookup(n)
}

// eachDocAt calls f with every document of database as of t, in no
// particular order; e.mu is held.
func (e *Engine) eachDocAt(database string, t time.Time, f func(path string, doc *pb.Document)) {
	var overlay map[string]*pb.Document
	if !e.latest(t) {
		overlay = e.hist.overlay(database, t)
	}
	if d := e.dbs[database]; d != nil {
		for path, doc := range d.docs.all() {
			if _, changed := overlay[path]; !changed {
				f(path, doc)
			}
		}
	}
	for path, doc := range overlay {
		if doc != nil {
			f(path, doc)
		}
	}
}

// eachPathAt calls f with the path of every document of database as of t,
// in no particular order, decoding none; e.mu is held.
func (e *Engine) eachPathAt(database string, t time.Time, f func(path string)) {
	var overlay map[string]*pb.Document
	if !e.latest(t) {
		overlay = e.hist.overlay(database, t)
	}
	if d := e.dbs[database]; d != nil {
		for path := range d.docs {
			if _, changed := overlay[path]; !changed {
				f(path)
			}
		}
	}
	for path, doc := range overlay {
		if doc != nil {
			f(path)
		}
	}
}

// executeAt runs a plan against the state as of t; e.mu is held. A document
// that no commit after t changed is now as it was at t: those are read
// through the indexes, up to the window the plan needs; the others are
// added as they were at t.
func (e *Engine) executeAt(p *plan, t time.Time) []*pb.Document {
	if e.latest(t) {
		return e.execute(p)
	}
	changed := e.hist.overlay(p.parent.Database, t)
	w := newWindow(p, 0)
	w.docs = e.collect(p, changed).docs
	for path, doc := range changed {
		if w.inScope(path) {
			if p.stats != nil && doc != nil {
				p.stats.docs++
			}
			w.offer(doc)
		}
	}
	return w.result()
}

// ConsistencyOf returns the consistency a request's transaction and
// read_time fields select.
func ConsistencyOf(txn []byte, readTime *timestamppb.Timestamp) Consistency {
	c := Consistency{Transaction: txn}
	if readTime != nil {
		c.ReadTime = readTime.AsTime().Truncate(time.Microsecond) // Firestore's precision
	}
	return c
}

// replayer rebuilds the history while a data folder opens: each logged
// commit newer than what is installed is recorded with the versions it
// replaced, so that after a restart reads reach back as far as the log
// does (to the snapshot's fold, within the window and the budget).
type replayer struct {
	snapshotSeen bool      // the snapshot held documents
	foldTime     time.Time // the state the snapshot holds, when the log says
	folded       bool
	first        time.Time // the first commit recorded
}

// snapshot installs the snapshot's documents.
func (r *replayer) snapshot(e *Engine) replayFunc {
	return func(database string, t time.Time, puts []encodedDoc, dels []string) {
		r.snapshotSeen = r.snapshotSeen || len(puts) > 0
		e.replay(database, t, puts, dels)
	}
}

// commit records a logged commit in the history, then installs it. A record
// no newer than the installed state (a log folded into the snapshot before a
// crash emptied it) is installed only.
func (r *replayer) commit(e *Engine) replayFunc {
	return func(database string, t time.Time, puts []encodedDoc, dels []string) {
		if !t.After(e.lastTime) {
			e.replay(database, t, puts, dels)
			return
		}
		c := Commit{Time: t}
		var docs docTable
		if d := e.dbs[database]; d != nil {
			docs = d.docs
		}
		for _, p := range puts {
			c.Changes = append(c.Changes, Change{Database: database, Path: p.path, oldEncoded: bytes.Clone(docs[p.path].encoded)})
		}
		for _, p := range dels {
			if prev, ok := docs[p]; ok {
				c.Changes = append(c.Changes, Change{Database: database, Path: p, oldEncoded: bytes.Clone(prev.encoded)})
			}
		}
		if r.first.IsZero() {
			r.first = t
		}
		e.hist.add(c)
		e.hist.trim(time.Now(), t)
		e.replay(database, t, puts, dels)
	}
}

func (r *replayer) fold(t time.Time) { r.foldTime, r.folded = t, true }

// setHorizon sets the earliest read time the rebuilt history serves: the
// fold, when the log names it; without a snapshot, every commit since the
// database was empty; for an older data folder's snapshot, which names no
// fold, its first logged commit (or its last, when none was logged).
func (r *replayer) setHorizon(e *Engine) {
	h := &e.hist
	switch {
	case r.folded:
		h.horizon = later(h.horizon, r.foldTime)
	case !r.snapshotSeen:
	case !r.first.IsZero():
		h.horizon = later(h.horizon, r.first)
	default:
		h.horizon = later(h.horizon, e.lastTime)
	}
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
