package server

import (
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultIdleTimeout is how long a request body may send nothing, and a
// kept-alive connection wait for its next request, before the connection is
// closed: as Google's front end closes idle uploads.
const DefaultIdleTimeout = 60 * time.Second

// idleBody is a request body whose reads must each make progress within a
// timeout: before each read the connection's read deadline moves to now plus
// the timeout, so a client that stops sending mid-body (an upload that
// declared 2 GiB and sent 1 KB) gets its request failed and its connection
// closed instead of holding them forever.
type idleBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	timeout  time.Duration
	deadline time.Time // the deadline last set
}

func (b *idleBody) Read(p []byte) (int, error) {
	// Moving the deadline costs a timer update: do it when a fraction of
	// the timeout has gone by, not on every read.
	if now := time.Now(); b.deadline.Sub(now) < b.timeout-b.timeout/8 {
		b.deadline = now.Add(b.timeout)
		_ = b.rc.SetReadDeadline(b.deadline)
	}
	return b.ReadCloser.Read(p)
}

// withIdleBodies gives every request body with content an idle timeout.
func withIdleBodies(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &idleBody{ReadCloser: r.Body, rc: http.NewResponseController(w), timeout: timeout}
		}
		next.ServeHTTP(w, r)
	})
}

// shedder is a listener that keeps its open connections below a cap set
// from the process's file limit, so that a flood of stalled clients cannot
// take every descriptor: past the cap, accepting a connection closes the
// one that has read nothing for longest. A health check or a new client
// then always gets in; the client shed, which had gone quiet, reconnects as
// the SDKs do after a dropped connection.
type shedder struct {
	net.Listener
	max   int
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

// shed wraps l, capping its connections at half the soft file limit: the
// other half is for the files loupe opens (data, logs, upload sessions);
// without a readable limit, l is returned as it is.
func shed(l net.Listener) net.Listener {
	limit, ok := fileLimit()
	if !ok || limit < 16 || limit > 1<<30 {
		return l
	}
	return &shedder{Listener: l, max: int(limit / 2), conns: map[*trackedConn]struct{}{}}
}

func (s *shedder) Accept() (net.Conn, error) {
	c, err := s.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, s: s}
	tc.lastRead.Store(time.Now().UnixNano())
	s.mu.Lock()
	var victim *trackedConn
	if len(s.conns) >= s.max {
		for other := range s.conns {
			if victim == nil || other.lastRead.Load() < victim.lastRead.Load() {
				victim = other
			}
		}
	}
	s.conns[tc] = struct{}{}
	s.mu.Unlock()
	if victim != nil {
		victim.Close()
	}
	return tc, nil
}

// trackedConn is a connection a shedder counts, with the time of its last
// read.
type trackedConn struct {
	net.Conn
	s        *shedder
	lastRead atomic.Int64 // unix nanoseconds
	once     sync.Once
}

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.lastRead.Store(time.Now().UnixNano())
	}
	return n, err
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.s.mu.Lock()
		delete(c.s.conns, c)
		c.s.mu.Unlock()
	})
	return c.Conn.Close()
}
