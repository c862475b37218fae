package emulator

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The server side of RFC 6455, as much as the Realtime Database SDKs use:
// text messages (fragmented or not), ping, pong and close; no extensions.

// maxMessage is the largest WebSocket message a client may send: the SDKs
// split theirs into 16 KiB frames, and a write is at most 16 MB
// (maxWireWrite); a larger message ends the connection.
const maxMessage = maxWireWrite + 1<<20

// wsConn is an upgraded connection.
type wsConn struct {
	conn net.Conn
	rd   *bufio.Reader
	wmu  sync.Mutex
	bw   *bufio.Writer
}

var errNotWebSocket = errors.New("not a WebSocket upgrade")

// upgrade answers a WebSocket handshake and takes the connection over.
func upgrade(w http.ResponseWriter, r *http.Request) (*wsConn, error) {
	if !headerHas(r.Header, "Connection", "upgrade") || !headerHas(r.Header, "Upgrade", "websocket") {
		return nil, errNotWebSocket
	}
	key := r.Header.Get("Sec-WebSocket-Key")
	if key == "" || r.Header.Get("Sec-WebSocket-Version") != "13" {
		return nil, errNotWebSocket
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, err
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n"
	if _, err := brw.WriteString(resp); err != nil {
		conn.Close()
		return nil, err
	}
	if err := brw.Flush(); err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return &wsConn{conn: conn, rd: brw.Reader, bw: bufio.NewWriterSize(conn, 32<<10)}, nil
}

func headerHas(h http.Header, name, token string) bool {
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

// read returns the next text message, answering pings on the way; io.EOF
// once the peer closes.
func (c *wsConn) read() (string, error) {
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
		if len(msg) > maxMessage {
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

func (c *wsConn) readFrame() (fin bool, op byte, payload []byte, err error) {
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
	if n > maxMessage {
		err = errors.New("websocket: frame too large")
		return
	}
	if !masked {
		err = errors.New("websocket: client frame not masked")
		return
	}
	var mask [4]byte
	if _, err = io.ReadFull(c.rd, mask[:]); err != nil {
		return
	}
	payload = make([]byte, n)
	if _, err = io.ReadFull(c.rd, payload); err != nil {
		return
	}
	for i := range payload {
		payload[i] ^= mask[i%4]
	}
	return
}

// writeTexts sends text messages, one frame each, with one flush.
func (c *wsConn) writeTexts(msgs [][]byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for _, m := range msgs {
		if err := c.frameLocked(opText, m); err != nil {
			return err
		}
	}
	return c.bw.Flush()
}

func (c *wsConn) writeFrame(op byte, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.frameLocked(op, payload); err != nil {
		return err
	}
	return c.bw.Flush()
}

func (c *wsConn) frameLocked(op byte, payload []byte) error {
	var h [10]byte
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
	if _, err := c.bw.Write(h[:hl]); err != nil {
		return err
	}
	_, err := c.bw.Write(payload)
	return err
}

func (c *wsConn) close() error { return c.conn.Close() }
