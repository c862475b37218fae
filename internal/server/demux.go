package server

import (
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// h2Preface opens every HTTP/2 connection without TLS ("prior knowledge"),
// which is how gRPC clients reach loupe.
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// prefaceTimeout bounds the wait for a new connection's first bytes.
const prefaceTimeout = 10 * time.Second

// demux splits the connections of l by their first bytes: HTTP/2 with prior
// knowledge goes to grpcL, served by the gRPC server's own transport (far
// cheaper per message than gRPC over net/http's), anything else to httpL.
// Closing either closes l.
func demux(l net.Listener) (httpL, grpcL net.Listener) {
	var once sync.Once
	closeParent := func() { once.Do(func() { _ = l.Close() }) }
	h := &chanListener{addr: l.Addr(), conns: make(chan net.Conn), done: make(chan struct{}), closeParent: closeParent}
	g := &chanListener{addr: l.Addr(), conns: make(chan net.Conn), done: make(chan struct{}), closeParent: closeParent}
	go func() {
		defer h.Close()
		defer g.Close()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go route(c, h, g)
		}
	}()
	return h, g
}

// route reads the start of c, as far as it can tell HTTP/2 from the rest,
// and hands c, those bytes replayed, to h or g.
func route(c net.Conn, h, g *chanListener) {
	buf := make([]byte, 0, len(h2Preface))
	_ = c.SetReadDeadline(time.Now().Add(prefaceTimeout))
	for len(buf) < len(h2Preface) && strings.HasPrefix(h2Preface, string(buf)) {
		n, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			break
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	if len(buf) == 0 {
		_ = c.Close()
		return
	}
	target := h
	if string(buf) == h2Preface {
		target = g
	}
	rc := &replayConn{Conn: c, r: io.MultiReader(bytes.NewReader(buf), c)}
	select {
	case target.conns <- rc:
	case <-target.done:
		_ = c.Close()
	}
}

// chanListener is one side of a demux: it accepts what the demux hands it.
type chanListener struct {
	addr        net.Addr
	conns       chan net.Conn
	done        chan struct{}
	once        sync.Once
	closeParent func()
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.closeParent()
	})
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// replayConn is a connection whose first bytes, already read, are read
// again.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }
