package emulator

import (
	"sync"
	"sync/atomic"
)

// How far a client may fall behind: the bytes queued for it or being
// written to it. Production disconnects a client that falls too far
// behind (its SDK reconnects and listens again, getting the data as it is
// then); loupe drops a connection once it has more than maxBehind bytes
// waiting, or once every connection together has more than
// maxBehindTotal, so that clients that never read cost bounded memory. A
// connection with nothing waiting always takes its next message, however
// large (a listen's first data may be the whole tree).
const (
	maxBehind      = 16 << 20
	maxBehindTotal = 256 << 20
)

// outbox queues a connection's outgoing messages without blocking the
// engine's publishing: the engine's listeners add to it, one goroutine per
// connection drains it.
type outbox struct {
	total *atomic.Int64 // the bytes behind of every outbox of the service

	mu       sync.Mutex
	msgs     [][]byte
	queued   int // bytes in msgs
	inflight int // bytes taken and not yet sent
	closed   bool
	// drop, when set, ends the connection once it is too far behind
	// (the writer may be stuck writing to a client that does not read).
	drop  func()
	ready chan struct{}
}

func newOutbox(total *atomic.Int64) *outbox {
	return &outbox{total: total, ready: make(chan struct{}, 1)}
}

// add queues msg; a connection too far behind is dropped (the outbox
// closes, and drop is called).
func (o *outbox) add(msg []byte) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	behind := o.queued + o.inflight
	if behind > 0 && (behind+len(msg) > maxBehind || o.total.Load()+int64(len(msg)) > maxBehindTotal) {
		o.closed = true
		o.discardLocked()
		o.total.Add(-int64(o.inflight))
		o.inflight = 0
		drop := o.drop
		o.mu.Unlock()
		o.wake()
		if drop != nil {
			drop()
		}
		return
	}
	o.msgs = append(o.msgs, msg)
	o.queued += len(msg)
	o.total.Add(int64(len(msg)))
	o.mu.Unlock()
	o.wake()
}

func (o *outbox) wake() {
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

// discardLocked drops the queued messages; o.mu is held.
func (o *outbox) discardLocked() {
	o.total.Add(-int64(o.queued))
	o.msgs, o.queued = nil, 0
}

// take waits for messages and returns them all, counted as behind until
// sent is called; ok is false once the outbox is closed and drained, or
// done is.
func (o *outbox) take(done <-chan struct{}) (msgs [][]byte, ok bool) {
	for {
		o.mu.Lock()
		msgs, closed := o.msgs, o.closed
		o.msgs, o.inflight, o.queued = nil, o.inflight+o.queued, 0
		o.mu.Unlock()
		if len(msgs) > 0 {
			return msgs, true
		}
		if closed {
			return nil, false
		}
		select {
		case <-o.ready:
		case <-done:
			return nil, false
		}
	}
}

// sent reports that the messages taken so far have been written.
func (o *outbox) sent() {
	o.mu.Lock()
	o.total.Add(-int64(o.inflight))
	o.inflight = 0
	o.mu.Unlock()
}

// drain returns the queued messages without waiting (they count as sent),
// and whether the outbox is closed.
func (o *outbox) drain() (msgs [][]byte, closed bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	msgs = o.msgs
	o.discardLocked()
	return msgs, o.closed
}

// close drops what is queued and ends the outbox; what is being written
// no longer counts.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.discardLocked()
	o.total.Add(-int64(o.inflight))
	o.inflight = 0
	o.mu.Unlock()
	o.wake()
}
