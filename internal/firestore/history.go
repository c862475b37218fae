package firestore

import (
	"sort"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Bounds of the version history that reads at a past read time use: like
// Firestore's, reads may go back about a minute; a burst of writes may
// shorten that to the last historyMaxChanges document changes.
const (
	historyWindow     = 60 * time.Second
	historyMaxChanges = 1 << 20
)

// history keeps the recent commits, whose Old states let a reader undo
// every commit after a read time. Their New states are not kept: a reader
// never needs them, and they would keep a decoded copy of every document
// written in the last minute alive beside its stored encoding.
type history struct {
	commits []Commit // oldest first, Changes without New
	changes int
	// horizon is the earliest read time that can be served: every commit
	// after it is kept.
	horizon time.Time
}

// add records a commit and forgets those that fell out of the window,
// keeping every one after durable (readers read at durable).
func (h *history) add(c Commit, durable time.Time) {
	if len(c.Changes) == 0 {
		return
	}
	past := make([]Change, len(c.Changes))
	for i, ch := range c.Changes {
		past[i] = Change{Database: ch.Database, Path: ch.Path, Old: ch.Old}
	}
	h.commits = append(h.commits, Commit{Time: c.Time, Changes: past})
	h.changes += len(c.Changes)
	oldest := c.Time.Add(-historyWindow)
	for len(h.commits) > 0 && !h.commits[0].Time.After(durable) && (h.commits[0].Time.Before(oldest) || h.changes > historyMaxChanges) {
		h.horizon = h.commits[0].Time
		h.changes -= len(h.commits[0].Changes)
		h.commits[0] = Commit{}
		h.commits = h.commits[1:]
	}
}

// dropAfter forgets the commits after t (undone ones).
func (h *history) dropAfter(t time.Time) {
	later := h.after(t)
	for i := range later {
		h.changes -= len(later[i].Changes)
		later[i] = Commit{}
	}
	h.commits = h.commits[:len(h.commits)-len(later)]
}

// reset forgets everything: reads before t cannot be served.
func (h *history) reset(t time.Time) {
	*h = history{horizon: t}
}

// after returns the commits later than t.
func (h *history) after(t time.Time) []Commit {
	i := sort.Search(len(h.commits), func(i int) bool { return h.commits[i].Time.After(t) })
	return h.commits[i:]
}

// asOf returns the state at t of the document at path when a later commit
// changed it (changed is false when the current state is the state at t).
func (h *history) asOf(database, path string, t time.Time) (doc *pb.Document, changed bool) {
	for _, c := range h.after(t) {
		for _, ch := range c.Changes {
			if ch.Database == database && ch.Path == path {
				return ch.Old, true
			}
		}
	}
	return nil, false
}

// overlay returns the state at t (nil: absent) of every document of
// database that a later commit changed, by path.
func (h *history) overlay(database string, t time.Time) map[string]*pb.Document {
	out := map[string]*pb.Document{}
	for _, c := range h.after(t) {
		for _, ch := range c.Changes {
			if _, seen := out[ch.Path]; !seen && ch.Database == database {
				out[ch.Path] = ch.Old
			}
		}
	}
	return out
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
	if at.Before(e.hist.horizon) || at.Before(time.Now().Add(-historyWindow)) {
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
