// Package changes is a change counter a console tab waits on by long poll
// instead of polling: a service's engine bumps it with every change its tab
// shows, and its adapter answers GET …:changes?since=N with
// httpjson.ServeChanges once the counter differs from N. It has no
// transport, so engines may hold one.
package changes

import (
	"context"
	"sync"
)

// Counter counts changes and wakes whoever waits for the next one. The
// zero value is ready to use.
type Counter struct {
	mu      sync.Mutex
	version uint64
	// bumped is closed, and replaced, by Bump.
	bumped chan struct{}
}

// Bump records a change.
func (c *Counter) Bump() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.version++
	if c.bumped != nil {
		close(c.bumped)
		c.bumped = nil
	}
}

// Version is the number of changes so far.
func (c *Counter) Version() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// Wait returns the version once it differs from since, or when ctx ends
// (then it may equal since).
func (c *Counter) Wait(ctx context.Context, since uint64) uint64 {
	c.mu.Lock()
	v := c.version
	if v != since {
		c.mu.Unlock()
		return v
	}
	if c.bumped == nil {
		c.bumped = make(chan struct{})
	}
	bumped := c.bumped
	c.mu.Unlock()
	select {
	case <-bumped:
		return c.Version()
	case <-ctx.Done():
		return v
	}
}
