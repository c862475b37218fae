// Package ring is a bounded, concurrency-safe log numbered from 1: it keeps
// the last entries added (the oldest fall off), and readers page with an id
// cursor or wait for new entries. An entry still held can be updated; each
// add and update takes the next revision, so readers can follow updates
// too. The request log and the log ring are built on it.
package ring

import (
	"cmp"
	"context"
	"slices"
	"sync"
)

// Ring keeps the last Cap entries of type T.
type Ring[T any] struct {
	mu      sync.Mutex
	items   []T     // items[(id-1)%cap] holds the entry with id
	revs    []int64 // revs[(id-1)%cap] is the revision that entry was added or last updated at
	next    int64   // the id the next entry gets
	rev     int64   // the latest revision
	floor   int64   // entries up to this id were cleared
	changed chan struct{}
	done    chan struct{} // closed by Close
	closed  sync.Once
}

// New returns a ring keeping the last capacity entries (at least one).
func New[T any](capacity int) *Ring[T] {
	n := max(1, capacity)
	return &Ring[T]{items: make([]T, n), revs: make([]int64, n), next: 1, changed: make(chan struct{}), done: make(chan struct{})}
}

// Cap is how many entries the ring keeps.
func (r *Ring[T]) Cap() int { return len(r.items) }

// Add records the entry stamp makes for the next id (stamp runs under the
// ring's lock: it only sets the id) and returns it.
func (r *Ring[T]) Add(stamp func(id int64) T) T {
	r.mu.Lock()
	e := stamp(r.next)
	slot := (r.next - 1) % int64(len(r.items))
	r.items[slot] = e
	r.next++
	r.touchLocked(slot)
	r.mu.Unlock()
	return e
}

// Update has change alter the entry with id, if it is still held, and
// returns it as changed; the entry takes the next revision.
func (r *Ring[T]) Update(id int64, change func(*T)) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id < r.oldest() || id >= r.next {
		var zero T
		return zero, false
	}
	slot := (id - 1) % int64(len(r.items))
	change(&r.items[slot])
	r.touchLocked(slot)
	return r.items[slot], true
}

// touchLocked gives slot the next revision and wakes every Wait.
func (r *Ring[T]) touchLocked(slot int64) {
	r.rev++
	r.revs[slot] = r.rev
	close(r.changed)
	r.changed = make(chan struct{})
}

// Revision is the latest revision: it grows with each add and update.
func (r *Ring[T]) Revision() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rev
}

// Changed returns the entries still held that were added or updated after
// revision rev and that keep accepts (nil: all), in the order of their
// latest change, and the revision now.
func (r *Ring[T]) Changed(rev int64, keep func(*T) bool) (entries []T, now int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	type change struct {
		rev int64
		e   T
	}
	var changes []change
	for id := r.oldest(); id < r.next; id++ {
		slot := (id - 1) % int64(len(r.items))
		if r.revs[slot] <= rev || keep != nil && !keep(&r.items[slot]) {
			continue
		}
		changes = append(changes, change{r.revs[slot], r.items[slot]})
	}
	slices.SortFunc(changes, func(a, b change) int { return cmp.Compare(a.rev, b.rev) })
	for _, c := range changes {
		entries = append(entries, c.e)
	}
	return entries, r.rev
}

// After returns the entries with an id above after that are still held and
// that keep accepts (nil: all), newest first, at most limit of them (0:
// all); latest is the newest id recorded so far (0 when none).
func (r *Ring[T]) After(after int64, limit int, keep func(*T) bool) (entries []T, latest int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	latest = r.next - 1
	for id := latest; id >= r.oldest() && id > after; id-- {
		e := &r.items[(id-1)%int64(len(r.items))]
		if keep != nil && !keep(e) {
			continue
		}
		entries = append(entries, *e)
		if limit > 0 && len(entries) == limit {
			break
		}
	}
	return entries, latest
}

// Get returns the entry with id, if it is still held.
func (r *Ring[T]) Get(id int64) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id < r.oldest() || id >= r.next {
		var zero T
		return zero, false
	}
	return r.items[(id-1)%int64(len(r.items))], true
}

// oldest is the id of the oldest entry still held; the caller holds the lock.
func (r *Ring[T]) oldest() int64 {
	return max(1, r.floor+1, r.next-int64(len(r.items)))
}

// Clear forgets every entry; ids keep counting up.
func (r *Ring[T]) Clear() {
	r.mu.Lock()
	r.floor = r.next - 1
	clear(r.items)
	clear(r.revs)
	r.mu.Unlock()
}

// Close ends every Wait, now and later (loupe is stopping); entries can
// still be added and read.
func (r *Ring[T]) Close() { r.closed.Do(func() { close(r.done) }) }

// Closed reports whether Close was called.
func (r *Ring[T]) Closed() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Wait blocks until an entry with an id above after is recorded, ctx ends
// or the ring is closed; it reports whether an entry was recorded.
func (r *Ring[T]) Wait(ctx context.Context, after int64) bool {
	return r.wait(ctx, func() bool { return r.next-1 > after })
}

// WaitChange blocks until an entry is added or updated after revision rev,
// ctx ends or the ring is closed; it reports whether one was.
func (r *Ring[T]) WaitChange(ctx context.Context, rev int64) bool {
	return r.wait(ctx, func() bool { return r.rev > rev })
}

// wait blocks until ready (called under the lock) holds, ctx ends or the
// ring is closed, and reports whether ready held.
func (r *Ring[T]) wait(ctx context.Context, ready func() bool) bool {
	for {
		r.mu.Lock()
		ok, changed := ready(), r.changed
		r.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		case <-r.done:
			return false
		}
	}
}
