// Package webchannel serves the WebChannel protocol (version 8) that the
// Firebase JS SDK uses in browsers to carry Firestore's Listen and Write
// streams over plain HTTP requests. It is generic: each session carries one
// logical bidirectional stream of JSON messages, opened by an Opener.
//
// Wire summary: a handshake POST without SID opens
// a session and may carry the first messages; forward POSTs carry more
// messages as form maps req{i}___data__ numbered by ofs; a back-channel GET
// (RID=rpc) receives server messages as length-prefixed chunks of
// [[arrayId, [message]], …], streamed (CI=0) or long-polled (CI=1), and
// acknowledges earlier arrays with AID. Chunk lengths count UTF-16 code units.
// TYPE=terminate ends a session; an unknown SID gets 400 "Unknown SID", which
// makes the client open a new channel. Sessions without a back channel for
// Options.Expiry are closed, with their streams.
package webchannel

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Stream is one logical stream carried by a session.
type Stream interface {
	// Receive gets each client message (JSON) exactly once, in order.
	Receive(msg []byte)
	// Close is called once when the session ends.
	Close()
}

// Opener opens the stream of a new session. headers are the init headers
// the client sent in the handshake body (Authorization among them); params
// are the handshake's URL parameters. send queues one server message (a
// JSON value) for the client; while the client is behind (more than
// Options.MaxUnsent bytes not yet written to a back channel, or MaxUnacked
// not yet acknowledged) it blocks until the client catches up or the session
// ends, so that a client that never reads holds a bounded amount of memory.
type Opener func(headers http.Header, params url.Values, send func(msg []byte)) (Stream, error)

// Options tune a Handler; zero values pick the defaults.
type Options struct {
	// Expiry closes sessions that had no back channel for this long (default 60 s).
	Expiry time.Duration
	// KeepAlive is the longest a streaming back channel stays silent (default 25 s).
	KeepAlive time.Duration
	// LongPoll is how long a long-poll back channel waits for data (default 25 s).
	LongPoll time.Duration
	// MaxBody bounds a forward request body (default 16 MiB).
	MaxBody int64
	// MaxUnsent bounds the bytes queued and not yet written to a back
	// channel before send blocks (default 1 MiB).
	MaxUnsent int64
	// MaxUnacked bounds the bytes queued and not yet acknowledged before
	// send blocks (default 8 MiB); a streaming back channel that has written
	// half of it ends, so that the client re-opens it and acknowledges.
	MaxUnacked int64
}

// Handler serves one channel URL (e.g. …/Listen/channel).
type Handler struct {
	open     Opener
	opts     Options
	mu       sync.Mutex
	sessions map[string]*session
	stop     chan struct{}
	stopOnce sync.Once
}

// NewHandler builds a handler and starts its expiry sweeper; Close stops it.
func NewHandler(open Opener, opts Options) *Handler {
	if opts.Expiry == 0 {
		opts.Expiry = 60 * time.Second
	}
	if opts.KeepAlive == 0 {
		opts.KeepAlive = 25 * time.Second
	}
	if opts.LongPoll == 0 {
		opts.LongPoll = 25 * time.Second
	}
	if opts.MaxBody == 0 {
		opts.MaxBody = 16 << 20
	}
	if opts.MaxUnsent == 0 {
		opts.MaxUnsent = 1 << 20
	}
	if opts.MaxUnacked == 0 {
		opts.MaxUnacked = 8 << 20
	}
	h := &Handler{open: open, opts: opts, sessions: map[string]*session{}, stop: make(chan struct{})}
	go h.sweep()
	return h
}

// Close ends every session and stops the sweeper.
func (h *Handler) Close() {
	h.mu.Lock()
	h.stopOnce.Do(func() { close(h.stop) })
	sessions := h.sessions
	h.sessions = map[string]*session{}
	h.mu.Unlock()
	for _, s := range sessions {
		s.close()
	}
}

// Sessions is the number of open sessions.
func (h *Handler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

func (h *Handler) sweep() {
	tick := time.NewTicker(h.opts.Expiry / 4)
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-tick.C:
			var expired []*session
			h.mu.Lock()
			for id, s := range h.sessions {
				if s.idleSince(now) > h.opts.Expiry {
					expired = append(expired, s)
					delete(h.sessions, id)
				}
			}
			h.mu.Unlock()
			for _, s := range expired {
				s.close()
			}
		}
	}
}

// array is one server message with its array id.
type array struct {
	id   int
	data []byte // the JSON of [id,[msg]]
	end  int64  // the bytes of every array queued up to this one
}

type session struct {
	id string

	applyMu sync.Mutex // serialises delivery of client maps
	lastMap int
	later   map[int][]byte
	stream  Stream

	mu        sync.Mutex
	room      *sync.Cond // signalled when arrays are written or acknowledged, or the session closes
	nextID    int
	pending   []array
	queued    int64 // bytes of every array queued
	written   int64 // of those, the bytes written to a back channel
	acked     int64 // of those, the bytes acknowledged
	limits    Options
	wake      chan struct{}
	getCancel context.CancelFunc
	activeGET bool
	getGen    int // counts back channels; the newest one owns activeGET
	lastGET   time.Time
	closed    bool
}

func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// send queues one server message as the next array, first waiting while
// the client is behind (see Opener).
func (s *session) send(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.closed && (s.queued-s.written > s.limits.MaxUnsent || s.queued-s.acked > s.limits.MaxUnacked) {
		s.room.Wait()
	}
	if s.closed {
		return
	}
	s.queue(msg)
}

// queue appends an array holding a copy of msg; s.mu is held.
func (s *session) queue(msg []byte) {
	id := s.nextID
	s.nextID++
	data := make([]byte, 0, len(msg)+16)
	data = fmt.Appendf(data, "[%d,[", id)
	data = append(data, msg...)
	data = append(data, "]]"...)
	s.queued += int64(len(data))
	s.pending = append(s.pending, array{id, data, s.queued})
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *session) idleSince(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.activeGET {
		return 0
	}
	return now.Sub(s.lastGET)
}

func (s *session) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.room.Broadcast()
	if s.getCancel != nil {
		s.getCancel()
	}
	s.mu.Unlock()
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	if s.stream != nil {
		s.stream.Close()
	}
}

// maxAhead bounds how far past the last applied map a request may reach:
// a client only skips ids when an earlier POST is still in flight, so a
// larger gap is bad input, refused rather than held forever.
const maxAhead = 1000

// errGap refuses maps that reach too far past the last applied one.
var errGap = errors.New("map ids too far ahead of the last applied map")

// deliver applies the client maps of a request strictly in map-id order,
// holding back gaps and dropping maps already applied. It refuses the
// whole request, applying nothing, when a map lies more than maxAhead ids
// past the last applied one.
func (s *session) deliver(maps map[int][]byte) error {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	for id := range maps {
		if id > s.lastMap+maxAhead {
			return errGap
		}
	}
	for id, m := range maps {
		if id > s.lastMap {
			s.later[id] = m
		}
	}
	for {
		m, ok := s.later[s.lastMap+1]
		if !ok {
			return nil
		}
		delete(s.later, s.lastMap+1)
		s.lastMap++
		s.stream.Receive(m)
	}
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache, no-store, max-age=0")
	sid := q.Get("SID")
	if sid == "" {
		if r.Method != http.MethodPost {
			http.Error(w, "missing SID", http.StatusBadRequest)
			return
		}
		h.handshake(w, r, q)
		return
	}
	h.mu.Lock()
	s := h.sessions[sid]
	h.mu.Unlock()
	if s == nil {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "<html>Unknown SID</html>")
		return
	}
	switch {
	case q.Get("TYPE") == "terminate":
		h.mu.Lock()
		delete(h.sessions, sid)
		h.mu.Unlock()
		s.close()
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodGet && q.Get("RID") == "rpc":
		h.backChannel(w, r, s, q)
	case r.Method == http.MethodPost:
		h.forward(w, r, s)
	default:
		http.Error(w, "unsupported channel request", http.StatusBadRequest)
	}
}

// parseMaps reads count, ofs and req{i}___data__ from a form body.
func parseMaps(form url.Values) (map[int][]byte, error) {
	if form.Get("count") == "" {
		return nil, nil
	}
	count, err := strconv.Atoi(form.Get("count"))
	if err != nil || count < 0 || count > maxAhead {
		return nil, errors.New("bad count")
	}
	ofs, err := strconv.Atoi(form.Get("ofs"))
	if err != nil || ofs < 0 || ofs > math.MaxInt32 {
		return nil, errors.New("bad ofs")
	}
	maps := make(map[int][]byte, count)
	for i := range count {
		data, ok := form["req"+strconv.Itoa(i)+"___data__"]
		if !ok || len(data) != 1 || !json.Valid([]byte(data[0])) {
			return nil, fmt.Errorf("bad map %d", i)
		}
		maps[ofs+i] = []byte(data[0])
	}
	return maps, nil
}

// parseHeaders reads the "Name:Value\r\n" block of the handshake.
func parseHeaders(block string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(block, "\r\n") {
		name, value, ok := strings.Cut(line, ":")
		if ok && name != "" {
			h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
	return h
}

// readForm reads the form body of a POST; on failure it has answered 413
// (body over Options.MaxBody) or 400 and reports false.
func (h *Handler) readForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		http.Error(w, fmt.Sprintf("request body too large (limit %d bytes)", tooLarge.Limit), http.StatusRequestEntityTooLarge)
		return nil, false
	}
	if err != nil {
		http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, "malformed form body: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return form, true
}

func (h *Handler) handshake(w http.ResponseWriter, r *http.Request, q url.Values) {
	form, ok := h.readForm(w, r)
	if !ok {
		return
	}
	maps, err := parseMaps(form)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s := &session{id: newSessionID(), lastMap: -1, later: map[int][]byte{}, nextID: 1, wake: make(chan struct{}, 1), lastGET: time.Now(), limits: h.opts}
	s.room = sync.NewCond(&s.mu)
	stream, err := h.open(parseHeaders(form.Get("headers")), q, s.send)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.stream = stream
	if err := s.deliver(maps); err != nil {
		s.close()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	select {
	case <-h.stop: // closed: nothing would ever expire this session
		h.mu.Unlock()
		s.close()
		http.Error(w, "the channel is shutting down", http.StatusServiceUnavailable)
		return
	default:
	}
	h.sessions[s.id] = s
	h.mu.Unlock()
	w.Header().Set("X-HTTP-Session-Id", s.id)
	writeChunk(w, fmt.Sprintf(`[[0,["c",%q,"",8,12,30000]]]`, s.id))
}

func (h *Handler) forward(w http.ResponseWriter, r *http.Request, s *session) {
	form, ok := h.readForm(w, r)
	if !ok {
		return
	}
	maps, err := parseMaps(form)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := s.deliver(maps); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if aid, err := strconv.Atoi(r.URL.Query().Get("AID")); err == nil {
		s.ack(aid)
	}
	s.mu.Lock()
	last := s.nextID - 1
	s.mu.Unlock()
	// [1, last array id queued, outstanding bytes]: "1" tells the client its
	// back channel is fine; 0 outstanding bytes keeps it from timing the data.
	writeChunk(w, fmt.Sprintf("[1,%d,0]", last))
}

// ack drops arrays the client has processed.
func (s *session) ack(aid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for i < len(s.pending) && s.pending[i].id <= aid {
		i++
	}
	if i > 0 {
		s.acked = max(s.acked, s.pending[i-1].end)
		s.written = max(s.written, s.acked)
		s.room.Broadcast()
	}
	s.pending = s.pending[i:]
}

func (h *Handler) backChannel(w http.ResponseWriter, r *http.Request, s *session, q url.Values) {
	aid, _ := strconv.Atoi(q.Get("AID"))
	s.ack(aid)
	longPoll := q.Get("CI") == "1"
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	s.mu.Lock()
	if s.getCancel != nil {
		s.getCancel() // one back channel per session: the newest wins
	}
	s.getCancel, s.activeGET = cancel, true
	s.getGen++
	gen := s.getGen
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.getGen == gen { // a newer back channel is not ours to end
			s.activeGET, s.lastGET = false, time.Now()
		}
		s.mu.Unlock()
	}()
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		w.WriteHeader(http.StatusOK)
		flusher.Flush() // headers now: the client's request is answered and waits for chunks
	}
	sent := aid
	wait := h.opts.KeepAlive
	if longPoll {
		wait = h.opts.LongPoll
		if to, err := strconv.Atoi(q.Get("TO")); err == nil && to > 0 {
			wait = time.Duration(to) * time.Millisecond
		}
	}
	deadline := time.NewTimer(4 * time.Minute) // recycle long streams
	defer deadline.Stop()
	idle := time.NewTimer(wait)
	defer idle.Stop()
	ending := false
	var wrote int64 // bytes this back channel wrote
	for {
		s.mu.Lock()
		batch := s.unsent(sent)
		closed := s.closed
		s.mu.Unlock()
		if len(batch) > 0 {
			writeChunk(w, joinArrays(batch))
			if flusher != nil {
				flusher.Flush()
			}
			last := batch[len(batch)-1]
			sent = last.id
			wrote += last.end - batch[0].end + int64(len(batch[0].data))
			s.mu.Lock()
			s.written = max(s.written, last.end)
			s.room.Broadcast()
			s.mu.Unlock()
			// A long stream ends once it has written half of what may go
			// unacknowledged: the client re-opens it and acknowledges.
			if longPoll || ending || wrote > h.opts.MaxUnacked/2 {
				return
			}
		}
		if closed {
			return
		}
		idle.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			ending = true
			s.noop() // end with data: the client re-opens the back channel
		case <-s.wake:
		case <-idle.C:
			s.noop() // never end with an empty body; keep the watchdog fed
		}
	}
}

// unsent returns a copy of the pending arrays after array id sent, which
// ascend; s.mu is held. The client acknowledges only now and then, so a
// streaming back channel finds them by search rather than by scanning.
func (s *session) unsent(sent int) []array {
	i, _ := slices.BinarySearchFunc(s.pending, sent+1, func(a array, id int) int { return cmp.Compare(a.id, id) })
	return slices.Clone(s.pending[i:])
}

func (s *session) noop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue([]byte(`"noop"`))
}

func joinArrays(batch []array) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, a := range batch {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(a.data)
	}
	b.WriteString("]\n")
	return b.String()
}

// writeChunk writes one length-prefixed chunk; the length counts UTF-16
// code units of the payload, as the JavaScript client measures it.
func writeChunk(w io.Writer, payload string) {
	_, _ = io.WriteString(w, strconv.Itoa(utf16Len(payload))+"\n"+payload)
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
