package firestore

import (
	"context"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
)

// abandonAfter is how long a transaction holding locks may go without a
// request while another one waits for them: then it is taken for abandoned
// (a client that crashed mid-transaction), its locks are released and its
// commit fails with ABORTED.
var abandonAfter = 10 * time.Second

// lockTable holds the pessimistic locks of read-write transactions, as the
// server SDKs see them in Firestore: a document a transaction reads or
// writes is locked until it commits or rolls back; another transaction (or
// a write outside any) that needs it waits. Deadlocks are prevented by
// wound-wait: a transaction that must wait for a younger one wounds it, and
// a wounded transaction is aborted when it would wait itself (at once if it
// already waits), so the older one always wins; a wounded transaction that
// needs no other lock may still commit. Readers outside read-write
// transactions never wait: they read the last durable state.
type lockTable struct {
	mu      sync.Mutex
	holders map[string]*lockOwner // document name → holder
	changed chan struct{}         // closed and replaced whenever a lock is released or an owner wounded
}

// lockOwner is a transaction (or a single write) as the lock table sees it.
type lockOwner struct {
	age      time.Time // when the transaction first began: older wins
	held     []string
	wounded  bool
	waiting  bool
	lastUsed time.Time
}

func newLockTable() *lockTable {
	return &lockTable{holders: map[string]*lockOwner{}, changed: make(chan struct{})}
}

// older reports whether o wins a conflict with other.
func (o *lockOwner) older(other *lockOwner) bool { return o.age.Before(other.age) }

// empty reports whether no lock is held.
func (lt *lockTable) empty() bool {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return len(lt.holders) == 0
}

// acquire locks names for o, waiting for their holders to finish. It fails
// with ABORTED when o is wounded while it would wait, and with the
// context's error when ctx ends.
func (lt *lockTable) acquire(ctx context.Context, o *lockOwner, names []string) error {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	for _, name := range names {
		for {
			o.lastUsed = time.Now()
			h := lt.holders[name]
			if h == nil {
				lt.holders[name] = o
				o.held = append(o.held, name)
				break
			}
			if h == o {
				break
			}
			if o.wounded {
				lt.releaseLocked(o)
				return errorf(errs.Aborted, "Transaction was aborted: an older transaction needs the document %s.", name)
			}
			idle := time.Since(h.lastUsed)
			if !h.waiting && idle >= abandonAfter {
				h.wounded = true
				lt.releaseLocked(h)
				continue
			}
			if o.older(h) && !h.wounded {
				h.wounded = true
				lt.signalLocked()
			}
			o.waiting = true
			changed := lt.changed
			lt.mu.Unlock()
			timer := time.NewTimer(abandonAfter - idle)
			var err error
			select {
			case <-changed:
			case <-timer.C:
			case <-ctx.Done():
				err = ctx.Err()
			}
			timer.Stop()
			lt.mu.Lock()
			o.waiting = false
			if err != nil {
				return errorf(errs.Aborted, "Transaction lock wait ended: %v", err)
			}
		}
	}
	return nil
}

// release frees every lock o holds.
func (lt *lockTable) release(o *lockOwner) {
	lt.mu.Lock()
	lt.releaseLocked(o)
	lt.mu.Unlock()
}

func (lt *lockTable) releaseLocked(o *lockOwner) {
	if len(o.held) == 0 {
		return // no one waits for o
	}
	for _, name := range o.held {
		if lt.holders[name] == o {
			delete(lt.holders, name)
		}
	}
	o.held = nil
	lt.signalLocked()
}

// signalLocked wakes every waiter to look again; lt.mu is held.
func (lt *lockTable) signalLocked() {
	close(lt.changed)
	lt.changed = make(chan struct{})
}

// aborted reports whether o lost its locks (wounded and released, or
// abandoned).
func (lt *lockTable) aborted(o *lockOwner) bool {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return o.wounded && len(o.held) == 0
}
