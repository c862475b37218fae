// Package websocket is as much of RFC 6455 as the Realtime Database
// protocol uses, server side (Upgrade) and client side (Dial): text
// messages (fragmented or not), ping, pong and close; no extensions.
package websocket

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Conn is a WebSocket connection, the server's or the client's end.
type Conn struct {
	conn net.Conn
	rd   *bufio.Reader
	wmu  sync.Mutex
	bw   *bufio.Writer
	// client says this is the client's end: it masks what it sends, and
	// the peer's frames come unmasked.
	client bool
	// maxMessage is the largest message the peer may send; a larger one
	// ends the connection.
	maxMessage int
}

// ErrNotWebSocket is Upgrade's error for a request that is not a
// WebSocket handshake.
var ErrNotWebSocket = errors.New("not a WebSocket upgrade")

// accept is the Sec-WebSocket-Accept answering key.
func accept(key string) string {
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Upgrade answers a WebSocket handshake and takes the connection over;
// the client may send messages of up to maxMessage bytes.
func Upgrade(w http.ResponseWriter, r *http.Request, maxMessage int) (*Conn, error) {
	if !HeaderHas(r.Header, "Connection", "upgrade") || !HeaderHas(r.Header, "Upgrade", "websocket") {
		return nil, ErrNotWebSocket
	}
	key := r.Header.Get("Sec-WebSocket-Key")
	if key == "" || r.Header.Get("Sec-WebSocket-Version") != "13" {
		return nil, ErrNotWebSocket
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, err
	}
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		accept(key) + "\r\n\r\n"
	if _, err := brw.WriteString(resp); err != nil {
		conn.Close()
		return nil, err
	}
	if err := brw.Flush(); err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return &Conn{conn: conn, rd: brw.Reader, bw: bufio.NewWriterSize(conn, 32<<10), maxMessage: maxMessage}, nil
}

// HeaderHas reports whether the comma-separated header name holds token.
func HeaderHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}

const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xa
)

// Read returns the next text message, answering pings on the way; io.EOF
// once the peer closes.
func (c *Conn) Read() (string, error) {
	var msg []byte
	inMessage := false
	for {
		fin, op, payload, err := c.readFrame()
		if err != nil {
			return "", err
		}
		switch op {
		case opPing:
			if err := c.writeFrame(opPong, payload); err != nil {
				return "", err
			}
			continue
		case opPong:
			continue
		case opClose:
			_ = c.writeFrame(opClose, closePayload(payload))
			return "", io.EOF
		case opText, opBinary:
			if inMessage {
				return "", errors.New("websocket: new message inside a fragmented one")
			}
			inMessage = true
			msg = payload
		case opContinuation:
			if !inMessage {
				return "", errors.New("websocket: continuation without a message")
			}
			msg = append(msg, payload...)
		default:
			return "", errors.New("websocket: unknown opcode")
		}
		if len(msg) > c.maxMessage {
			return "", errors.New("websocket: message too large")
		}
		if fin {
			if !utf8.Valid(msg) {
				return "", errors.New("websocket: text is not UTF-8")
			}
			return string(msg), nil
		}
	}
}

// closePayload echoes the peer's close code.
func closePayload(p []byte) []byte {
	if len(p) >= 2 {
		return p[:2]
	}
	return nil
}

func (c *Conn) readFrame() (fin bool, op byte, payload []byte, err error) {
	var h [2]byte
	if _, err = io.ReadFull(c.rd, h[:]); err != nil {
		return
	}
	fin, op = h[0]&0x80 != 0, h[0]&0x0f
	masked := h[1]&0x80 != 0
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err = io.ReadFull(c.rd, b[:]); err != nil {
			return
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err = io.ReadFull(c.rd, b[:]); err != nil {
			return
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > uint64(c.maxMessage) {
		err = errors.New("websocket: frame too large")
		return
	}
	if masked == c.client {
		err = errors.New("websocket: a client's frames are masked, a server's are not")
		return
	}
	var mask [4]byte
	if masked {
		if _, err = io.ReadFull(c.rd, mask[:]); err != nil {
			return
		}
	}
	payload = make([]byte, n)
	if _, err = io.ReadFull(c.rd, payload); err != nil {
		return
	}
	if masked {
		for i := range payload {
			payload[i] ^= mask[i%4]
		}
	}
	return
}

// WriteTexts sends text messages, one frame each, with one flush.
func (c *Conn) WriteTexts(msgs [][]byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for _, m := range msgs {
		if err := c.frameLocked(opText, m); err != nil {
			return err
		}
	}
	return c.bw.Flush()
}

func (c *Conn) writeFrame(op byte, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.frameLocked(op, payload); err != nil {
		return err
	}
	return c.bw.Flush()
}

func (c *Conn) frameLocked(op byte, payload []byte) error {
	var h [14]byte
	h[0] = 0x80 | op
	n := len(payload)
	hl := 2
	switch {
	case n < 126:
		h[1] = byte(n)
	case n < 1<<16:
		h[1] = 126
		binary.BigEndian.PutUint16(h[2:], uint16(n))
		hl = 4
	default:
		h[1] = 127
		binary.BigEndian.PutUint64(h[2:], uint64(n))
		hl = 10
	}
	if !c.client {
		if _, err := c.bw.Write(h[:hl]); err != nil {
			return err
		}
		_, err := c.bw.Write(payload)
		return err
	}
	h[1] |= 0x80
	mask := h[hl : hl+4]
	_, _ = rand.Read(mask)
	if _, err := c.bw.Write(h[:hl+4]); err != nil {
		return err
	}
	masked := make([]byte, len(payload))
	for i, b := range payload {
		masked[i] = b ^ mask[i%4]
	}
	_, err := c.bw.Write(masked)
	return err
}

// Close closes the connection (without a close frame).
func (c *Conn) Close() error { return c.conn.Close() }

// SetWriteDeadline bounds the writes to come: past t they fail.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.conn.SetWriteDeadline(t) }

// Dial opens a WebSocket to rawURL (ws:// or wss://) with header on the
// handshake; the server may send messages of up to maxMessage bytes. The
// handshake is bounded by ctx; the connection outlives it.
func Dial(ctx context.Context, rawURL string, header http.Header, maxMessage int) (*Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), map[string]string{"ws": "80", "wss": "443"}[u.Scheme])
	}
	var conn net.Conn
	switch u.Scheme {
	case "ws":
		conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	case "wss":
		conn, err = (&tls.Dialer{Config: &tls.Config{MinVersion: tls.VersionTLS12, ServerName: u.Hostname()}}).DialContext(ctx, "tcp", addr)
	default:
		return nil, fmt.Errorf("websocket: %q is not a ws:// or wss:// URL", rawURL)
	}
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	c, err := handshake(conn, u, header, maxMessage)
	if !stop() || err != nil {
		conn.Close()
		return nil, cmp.Or(ctx.Err(), err)
	}
	return c, nil
}

// handshake sends the client's upgrade request on conn and reads the
// server's answer.
func handshake(conn net.Conn, u *url.URL, header http.Header, maxMessage int) (*Conn, error) {
	var k [16]byte
	_, _ = rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	req := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery},
		Host: u.Host, Header: header.Clone(), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Key", key)
	req.Header.Set("Sec-WebSocket-Version", "13")
	bw := bufio.NewWriterSize(conn, 32<<10)
	if err := req.Write(bw); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	rd := bufio.NewReader(conn)
	resp, err := http.ReadResponse(rd, req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != accept(key) {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		return nil, &HandshakeError{Status: resp.StatusCode, Body: string(body)}
	}
	return &Conn{conn: conn, rd: rd, bw: bw, client: true, maxMessage: maxMessage}, nil
}

// HandshakeError is a server's refusal of a WebSocket handshake.
type HandshakeError struct {
	Status int
	Body   string
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("websocket: the server answered the handshake with %d %s", e.Status, strings.TrimSpace(e.Body))
}
