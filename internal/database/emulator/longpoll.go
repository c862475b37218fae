package emulator

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/database"
)

// Long polling (/.lp) carries a session of the wire protocol when the
// browser SDK cannot use a WebSocket (or forceLongPolling() is called). The
// SDK loads every request as a script tag in a hidden iframe, so each
// answer is JavaScript that calls the page's callbacks: pLPCommand<cb>
// with a command ("start" with the session's id and password, "close") and
// pRTLPCB<cb> with a packet number and the messages of that packet, which
// the SDK puts back in order.
//
//   - start=t&cb=<cb>: opens a session; the answer starts it and carries the
//     handshake as packet 0.
//   - id=&pw=&ser=[&seg<i>=&ts<i>=&d<i>=...]: a poll. It may carry segments
//     of the client's messages (web-safe base64 of the JSON, split in
//     numbered segments, ts being the segment count of the message). The
//     server holds the poll until it has messages to send, a newer poll
//     arrives (which releases it empty) or lpHold passes.
//   - dframe=t&id=&pw=: the disconnect frame, an iframe held open for the
//     session's life; when the page goes away the browser drops it and the
//     session ends (its onDisconnect writes run).

// lpHold is the longest a poll is held without data: the SDK opens a new
// one every 25 s anyway.
const lpHold = 20 * time.Second

// lpIdle ends a session that has had no request in flight for this long.
const lpIdle = 30 * time.Second

// lpMaxSegments bounds the segments a session keeps waiting for the rest of
// their message.
const lpMaxSegments = 1 << 16

// callbackID is what the SDK appends to its callback names.
var callbackID = regexp.MustCompile(`^[A-Za-z0-9_]{1,32}$`)

// lpSession is one long-polling session.
type lpSession struct {
	c      *conn
	id, pw string
	cb     string

	mu       sync.Mutex
	packet   int                // the next packet's number
	segs     map[int]lpSegment  // segments received ahead of their message
	next     int                // the next segment to put into a message
	held     context.CancelFunc // releases the poll being held
	inflight int
	seen     time.Time
}

type lpSegment struct {
	total int
	data  string
}

var errBadSegment = errors.New("long polling: malformed segment")

// serveLongPoll answers /.lp.
func (s *Service) serveLongPoll(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("start") == "t" {
		s.lpStart(w, r)
		return
	}
	sess := s.lpSession(q.Get("id"), q.Get("pw"))
	if sess == nil {
		// The script fails to load, and the SDK opens a new session.
		http.Error(w, "no such long-polling session", http.StatusNotFound)
		return
	}
	sess.enter()
	defer sess.leave()
	if q.Get("dframe") == "t" {
		select {
		case <-r.Context().Done():
			sess.c.shutdown()
		case <-sess.c.done:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		return
	}
	if err := sess.receive(q); err != nil {
		s.env.Logger.Debug("database long polling: bad message", "err", err)
		sess.c.shutdown()
	}
	ctx, cancel := context.WithTimeout(r.Context(), lpHold)
	defer cancel()
	sess.mu.Lock()
	if sess.held != nil {
		sess.held()
	}
	sess.held = cancel
	sess.mu.Unlock()
	writeScript(w, sess.poll(r.Context(), ctx))
}

// lpStart opens a session and answers its start command and handshake.
func (s *Service) lpStart(w http.ResponseWriter, r *http.Request) {
	ns := s.namespace(r)
	if err := database.CheckNamespace(ns); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cb := r.URL.Query().Get("cb")
	if !callbackID.MatchString(cb) {
		http.Error(w, "long polling needs a callback id (cb)", http.StatusBadRequest)
		return
	}
	sess := &lpSession{c: newConn(s, ns), id: randomHex(8), pw: randomHex(16), cb: cb, segs: map[int]lpSegment{}, seen: time.Now()}
	s.mu.Lock()
	s.lp[sess.id] = sess
	s.mu.Unlock()
	go s.lpWatch(sess)
	b := []byte("parent.pLPCommand" + cb + `("start","` + sess.id + `","` + sess.pw + `");`)
	sess.mu.Lock()
	b = sess.packetScript(b, [][]byte{sess.c.hello(r.Host)})
	sess.mu.Unlock()
	writeScript(w, b)
}

// lpWatch forgets a session once it ends, and ends it once its client has
// had no request in flight for lpIdle.
func (s *Service) lpWatch(sess *lpSession) {
	tick := time.NewTicker(lpIdle / 4)
	defer tick.Stop()
	for {
		select {
		case <-sess.c.done:
			s.mu.Lock()
			delete(s.lp, sess.id)
			s.mu.Unlock()
			return
		case <-tick.C:
			sess.mu.Lock()
			idle := sess.inflight == 0 && time.Since(sess.seen) > lpIdle
			sess.mu.Unlock()
			if idle {
				sess.c.shutdown()
			}
		}
	}
}

func (s *Service) lpSession(id, pw string) *lpSession {
	s.mu.Lock()
	sess := s.lp[id]
	s.mu.Unlock()
	if sess == nil || subtle.ConstantTimeCompare([]byte(sess.pw), []byte(pw)) != 1 {
		return nil
	}
	return sess
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (sess *lpSession) enter() {
	sess.mu.Lock()
	sess.inflight++
	sess.seen = time.Now()
	sess.mu.Unlock()
}

func (sess *lpSession) leave() {
	sess.mu.Lock()
	sess.inflight--
	sess.seen = time.Now()
	sess.mu.Unlock()
}

// receive takes a poll's segments and hands each message they complete to
// the session, in segment order.
func (sess *lpSession) receive(q map[string][]string) error {
	get := func(k string) (string, bool) {
		v, ok := q[k]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	var msgs []string
	sess.mu.Lock()
	for i := 0; ; i++ {
		n := strconv.Itoa(i)
		seg, ok := get("seg" + n)
		if !ok {
			break
		}
		ts, _ := get("ts" + n)
		d, _ := get("d" + n)
		num, err1 := strconv.Atoi(seg)
		total, err2 := strconv.Atoi(ts)
		if err1 != nil || err2 != nil || num < sess.next || total < 1 || total > lpMaxSegments || len(sess.segs) >= lpMaxSegments {
			sess.mu.Unlock()
			return errBadSegment
		}
		sess.segs[num] = lpSegment{total: total, data: d}
	}
	for {
		first, ok := sess.segs[sess.next]
		if !ok || !sess.complete(first.total) {
			break
		}
		var b strings.Builder
		for k := sess.next; k < sess.next+first.total; k++ {
			b.WriteString(sess.segs[k].data)
			delete(sess.segs, k)
		}
		sess.next += first.total
		text, err := base64.URLEncoding.DecodeString(strings.ReplaceAll(b.String(), ".", "="))
		if err != nil {
			sess.mu.Unlock()
			return errBadSegment
		}
		msgs = append(msgs, string(text))
	}
	sess.mu.Unlock()
	for _, m := range msgs {
		if err := sess.c.message(m); err != nil {
			return err
		}
	}
	return nil
}

// complete reports whether the total segments from sess.next are all there;
// sess.mu is held.
func (sess *lpSession) complete(total int) bool {
	for k := sess.next; k < sess.next+total; k++ {
		if _, ok := sess.segs[k]; !ok {
			return false
		}
	}
	return true
}

// poll is the answer to a poll: the messages waiting, as one packet, once
// there are some; nothing once hold ends first; the close command once the
// session has ended. Messages are taken only while the client still waits
// for the answer (req).
func (sess *lpSession) poll(req, hold context.Context) []byte {
	for {
		if req.Err() != nil {
			return nil
		}
		sess.mu.Lock()
		msgs, closed := sess.c.out.drain()
		var b []byte
		switch {
		case len(msgs) > 0:
			b = sess.packetScript(nil, msgs)
		case closed:
			b = []byte("parent.pLPCommand" + sess.cb + `("close",` + strconv.Itoa(max(sess.packet-1, 0)) + ");")
		}
		sess.mu.Unlock()
		if b != nil {
			return b
		}
		select {
		case <-sess.c.out.ready:
		case <-hold.Done():
			return nil
		}
	}
}

// packetScript appends the call handing msgs to the page as the next
// packet; sess.mu is held.
func (sess *lpSession) packetScript(b []byte, msgs [][]byte) []byte {
	b = append(b, "parent.pRTLPCB"+sess.cb+"("...)
	b = strconv.AppendInt(b, int64(sess.packet), 10)
	sess.packet++
	b = append(b, ",["...)
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, jsSafe(m)...)
	}
	return append(b, "]);"...)
}

// jsSafe escapes the two characters JSON allows in strings but older
// JavaScript does not.
func jsSafe(msg []byte) []byte {
	if !bytes.Contains(msg, []byte("\u2028")) && !bytes.Contains(msg, []byte("\u2029")) {
		return msg
	}
	msg = bytes.ReplaceAll(msg, []byte("\u2028"), []byte(`\u2028`))
	return bytes.ReplaceAll(msg, []byte("\u2029"), []byte(`\u2029`))
}

func writeScript(w http.ResponseWriter, script []byte) {
	w.Header().Set("Content-Type", "application/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache, no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(script)
}
