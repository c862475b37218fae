// Transactions: read-write ones lock what they read (locks.go) and are
// checked again at commit; read-only ones read one state.

package firestore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"slices"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// transaction is a transaction: a read-write one holds locks (owner) on
// the documents it reads and records their versions, checked again at
// commit; a read-only one reads the state at its read time.
type transaction struct {
	database string
	owner    *lockOwner // read-write only
	readOnly bool
	readTime time.Time                         // read-only: the state it reads (zero: the latest)
	reads    map[string]*timestamppb.Timestamp // name → updateTime (nil: missing)
	expires  time.Time
	staged   []*pb.Write // read-write only: applied first when it commits
}

func (t *transaction) read(name string, doc *pb.Document) {
	if doc == nil {
		t.reads[name] = nil
	} else {
		t.reads[name] = doc.UpdateTime
	}
}

// validate fails with ABORTED when a read document changed; e.mu is held.
func (t *transaction) validate(e *Engine) error {
	for name, ut := range t.reads {
		n, _ := ParseDocumentName(name)
		doc := e.lookup(n)
		var now *timestamppb.Timestamp
		if doc != nil {
			now = doc.UpdateTime
		}
		if (now == nil) != (ut == nil) || (now != nil && !proto.Equal(now, ut)) {
			return errorf(errs.Aborted, "Transaction lock timeout: the document %s was changed by another transaction.", name)
		}
	}
	return nil
}

// txnLifetime bounds how long an abandoned transaction is kept.
const txnLifetime = 270 * time.Second

// BeginTransaction starts a transaction and returns its id. A read-only
// transaction reads one consistent state: the one at its read time, or the
// latest when it begins.
func (e *Engine) BeginTransaction(database string, opts *pb.TransactionOptions) ([]byte, error) {
	if _, err := ParseDatabase(database); err != nil {
		return nil, err
	}
	// An id is the transaction's age (when it first began: a retry names
	// the transaction it retries and keeps its age, so it wins more
	// conflicts) and random bytes.
	now := time.Now()
	age := now
	if retried := opts.GetReadWrite().GetRetryTransaction(); len(retried) == 16 {
		if t := time.Unix(0, int64(binary.BigEndian.Uint64(retried))); t.Before(now) {
			age = t
		}
	}
	id := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(age.UnixNano()))
	id = id[:16]
	_, _ = rand.Read(id[8:])
	e.mu.Lock()
	defer e.mu.Unlock()
	readOnly := opts.GetReadOnly() != nil
	readTime := e.readAt(e.lastTime)
	if rt := opts.GetReadOnly().GetReadTime(); rt != nil {
		if err := rt.CheckValid(); err != nil {
			return nil, errorf(errs.InvalidArgument, "Invalid read_time: %v", err)
		}
		readTime = rt.AsTime().Truncate(time.Microsecond) // Firestore's precision
		if err := e.checkReadTime(readTime); err != nil {
			return nil, err
		}
	}
	for k, t := range e.txns {
		if now.After(t.expires) {
			delete(e.txns, k)
			if t.owner != nil {
				e.locks.release(t.owner)
			}
		}
	}
	txn := &transaction{database: database, readOnly: readOnly, readTime: readTime, reads: map[string]*timestamppb.Timestamp{}, expires: now.Add(txnLifetime)}
	if !readOnly {
		txn.owner = &lockOwner{age: age, lastUsed: now}
	}
	e.txns[string(id)] = txn
	return id, nil
}

// ReadConsistency returns the state a read request selects: the
// transaction it names, a new one it asks for (begun here: the answer's
// first response carries its id), or its read time.
func (e *Engine) ReadConsistency(database string, txn []byte, newTxn *pb.TransactionOptions, readTime *timestamppb.Timestamp) (Consistency, error) {
	if newTxn == nil {
		return ConsistencyOf(txn, readTime), nil
	}
	id, err := e.BeginTransaction(database, newTxn)
	return Consistency{Transaction: id}, err
}

// Rollback abandons a transaction.
func (e *Engine) Rollback(database string, id []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.txns[string(id)]
	if !ok {
		return errorf(errs.InvalidArgument, "Invalid transaction.")
	}
	delete(e.txns, string(id))
	if t.owner != nil {
		e.locks.release(t.owner)
	}
	return nil
}

// StageWrites adds writes to a read-write transaction: they apply when
// it commits, before the commit request's own writes, and are dropped when
// it rolls back, aborts or expires (a pipeline's write stages inside a
// transaction the client began). The staged writes and the commit's own
// are held to one commit's limits together.
func (e *Engine) StageWrites(database string, txnID []byte, writes []*pb.Write) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, err := e.txn(txnID)
	if err != nil {
		return err
	}
	if t.readOnly {
		return errorf(errs.InvalidArgument, "Cannot modify entities in a read-only transaction.")
	}
	if t.database != database {
		return errorf(errs.InvalidArgument, "The transaction belongs to database %s, not %s.", t.database, database)
	}
	staged := append(slices.Clip(t.staged), writes...)
	if err := checkWrites(staged); err != nil {
		return err
	}
	t.staged = staged
	return nil
}

// withStaged is a transaction's staged writes followed by writes (writes
// alone when it staged none or does not exist: Commit reports that).
func (e *Engine) withStaged(txnID []byte, writes []*pb.Write) []*pb.Write {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if t := e.txns[string(txnID)]; t != nil && len(t.staged) > 0 {
		return append(slices.Clip(t.staged), writes...)
	}
	return writes
}

// lockReads takes a read-write transaction's locks on the documents it is
// about to read (nothing for other reads; readState reports a bad id).
func (e *Engine) lockReads(ctx context.Context, c Consistency, names []string) error {
	if c.Transaction == nil {
		return nil
	}
	e.mu.RLock()
	t, err := e.txn(c.Transaction)
	e.mu.RUnlock()
	if err != nil || t.owner == nil {
		return nil
	}
	if err := e.locks.acquire(ctx, t.owner, names); err != nil {
		e.forget(c.Transaction)
		return err
	}
	return nil
}

// lockWrites takes the locks a commit needs on the documents it writes:
// its transaction's, or, when read-write transactions hold locks, its own
// for the time of the commit. It returns the owner to release once the
// commit is over, or nil.
func (e *Engine) lockWrites(ctx context.Context, writes []*pb.Write, txnID []byte) (*lockOwner, error) {
	var owner *lockOwner
	if txnID != nil {
		e.mu.RLock()
		t, err := e.txn(txnID)
		e.mu.RUnlock()
		if err != nil || t.owner == nil {
			return nil, nil // Commit reports it
		}
		owner = t.owner
		if e.locks.aborted(owner) {
			e.forget(txnID)
			return nil, errorf(errs.Aborted, "Transaction was aborted: it held its locks too long while another transaction waited.")
		}
	} else if e.locks.empty() {
		return nil, nil
	} else {
		owner = &lockOwner{age: time.Now()}
	}
	names := make([]string, 0, len(writes))
	for _, w := range writes {
		if name := writeName(w); name != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names) // one order for all, so writes never wait for each other in a circle
	if err := e.locks.acquire(ctx, owner, names); err != nil {
		if txnID != nil {
			e.forget(txnID)
		}
		return nil, err
	}
	return owner, nil
}

// forget ends a transaction that was aborted, releasing its locks.
func (e *Engine) forget(id []byte) {
	e.mu.Lock()
	t := e.txns[string(id)]
	delete(e.txns, string(id))
	e.mu.Unlock()
	if t != nil && t.owner != nil {
		e.locks.release(t.owner)
	}
}

func (e *Engine) txn(id []byte) (*transaction, error) {
	t, ok := e.txns[string(id)]
	if !ok {
		return nil, errorf(errs.InvalidArgument, "The referenced transaction has expired or is no longer valid.")
	}
	return t, nil
}
