// Package changes is a change counter a console tab waits on by long poll
// instead of polling: a service bumps it with every change its tab shows,
// and GET …:changes?since=N answers once the counter differs from N.
package changes

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
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

// LongPoll is how long Serve waits for a change before it answers the
// same version.
var LongPoll = 25 * time.Second

// Serve answers {"version": N}: at once without ?since=, else once the
// counter differs from since, or after LongPoll unchanged.
func Serve(w http.ResponseWriter, r *http.Request, c *Counter) {
	v := c.Version()
	if since := r.URL.Query().Get("since"); since != "" {
		n, err := strconv.ParseUint(since, 10, 64)
		if err != nil {
			httpjson.Error(w, errs.New(errs.InvalidArgument, "since must be a version number"))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), LongPoll)
		defer cancel()
		v = c.Wait(ctx, n)
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"version": v})
}
