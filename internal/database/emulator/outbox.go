package emulator

import "sync"

// maxPending is how many bytes may wait for a slow client before its
// connection is dropped: no single client makes loupe hold unbounded
// memory.
const maxPending = 64 << 20

// outbox queues a connection's outgoing messages without blocking the
// engine's publishing: the engine's listeners add to it, one goroutine per
// connection drains it.
type outbox struct {
	mu      sync.Mutex
	msgs    [][]byte
	size    int
	closed  bool
	overrun bool
	ready   chan struct{}
}

func newOutbox() *outbox { return &outbox{ready: make(chan struct{}, 1)} }

// add queues msg; past maxPending the outbox closes as overrun.
func (o *outbox) add(msg []byte) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	o.msgs = append(o.msgs, msg)
	o.size += len(msg)
	if o.size > maxPending {
		o.closed, o.overrun = true, true
		o.msgs = nil
	}
	o.mu.Unlock()
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

// take waits for messages and returns them all; ok is false once the
// outbox is closed and drained, or done is.
func (o *outbox) take(done <-chan struct{}) (msgs [][]byte, ok bool) {
	for {
		msgs, closed := o.drain()
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

// drain returns the queued messages without waiting, and whether the outbox
// is closed.
func (o *outbox) drain() (msgs [][]byte, closed bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	msgs, o.msgs, o.size = o.msgs, nil, 0
	return msgs, o.closed
}

func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	select {
	case o.ready <- struct{}{}:
	default:
	}
}
