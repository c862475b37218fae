package emulator

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/database"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/websocket"
)

// protocolVersion is the wire protocol version the SDKs speak ("v=5").
const protocolVersion = "5"

// conn is one client session of the wire protocol, whatever carries it
// (a WebSocket, or long polling): the client's requests in, data pushes
// and responses out through its outbox, in order.
//
// Requests take effect in the order they came, one after another, as
// production runs a connection's requests, and are answered in that order.
// A write is applied at its turn and the next request starts without
// waiting for it to be durable (so a client's burst of writes shares the
// log's syncs); any other request starts once the writes before it are
// published and answered, so a listen sent before a write gets the data
// before it and then its change, a write sent after an unlisten is not
// pushed to the removed listen, and a client reads its own writes. Each
// connection has its own worker, so a slow request holds up only its own
// connection.
type conn struct {
	s       *Service
	ns      string
	session string
	out     *outbox
	steps   chan func()        // the requests' steps, in order, run by work
	writes  chan func() []byte // the answers of submitted writes, in order, sent by answer
	done    chan struct{}
	once    sync.Once
	// unsettled (work's own) is whether a write was submitted since the
	// last settle.
	unsettled bool

	mu           sync.Mutex
	caller       identity.Principal
	listens      map[string]*wireListen
	onDisconnect []database.Write
	frames       int      // frames still expected of a split message
	partial      []string // the frames of it so far
	partialSize  int      // their bytes
}

// maxWireWrite is the largest message a session may send: production
// takes writes of up to 16 MB from the SDKs and refuses a larger one with
// write_too_big.
const maxWireWrite = 16 << 20

// maxMessage is the largest WebSocket message a client may send: the SDKs
// split theirs into 16 KiB frames, and a write is at most 16 MB
// (maxWireWrite); a larger message ends the connection.
const maxMessage = maxWireWrite + 1<<20

// requestNumber finds a request's number near the start of its message.
var requestNumber = regexp.MustCompile(`"r":\s*([0-9]{1,15})`)

// tooBig refuses a message larger than maxWireWrite, in its turn, as
// production refuses a write that large; one whose start names no request
// ends the session.
func (c *conn) tooBig(start string) error {
	m := requestNumber.FindStringSubmatch(start[:min(len(start), 256)])
	if m == nil {
		return errBadMessage
	}
	r := json.Number(m[1])
	c.enqueue(func() []byte {
		return response(r, "write_too_big", database.AppendString(nil, "Data to write exceeds the maximum size that can be modified with a single request."))
	})
	return nil
}

func newConn(s *Service, ns string) *conn {
	var id [8]byte
	_, _ = rand.Read(id[:])
	c := &conn{s: s, ns: ns, session: hex.EncodeToString(id[:]), out: newOutbox(&s.behind),
		steps: make(chan func(), 1024), writes: make(chan func() []byte, 1024), done: make(chan struct{}),
		listens: map[string]*wireListen{}}
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	go c.work()
	go c.answer()
	return c
}

// hello is the server's handshake.
func (c *conn) hello(host string) []byte {
	b := []byte(`{"t":"c","d":{"t":"h","d":{"ts":`)
	b = strconv.AppendInt(b, time.Now().UnixMilli(), 10)
	b = append(b, `,"v":"`+protocolVersion+`","h":`...)
	b = database.AppendString(b, host)
	b = append(b, `,"s":`...)
	b = database.AppendString(b, c.session)
	return append(b, "}}}"...)
}

// work runs the queued steps in order.
func (c *conn) work() {
	for {
		select {
		case step := <-c.steps:
			step()
		case <-c.done:
			return
		}
	}
}

// answer sends the submitted writes' answers, in order, each once its
// write is durable and published.
func (c *conn) answer() {
	for {
		select {
		case a := <-c.writes:
			if msg := a(); msg != nil {
				c.out.add(msg)
			}
		case <-c.done:
			return
		}
	}
}

func (c *conn) queue(step func()) {
	select {
	case c.steps <- step:
	case <-c.done:
	}
}

// enqueue queues job to run after every request before it has taken
// effect and been answered; its answer, if any, is sent then.
func (c *conn) enqueue(job func() []byte) { c.queue(func() { c.run(job) }) }

// run (on work) runs job once the writes before it are settled, and sends
// its answer, if any.
func (c *conn) run(job func() []byte) {
	c.settle()
	if msg := job(); msg != nil {
		c.out.add(msg)
	}
}

// settle (on work) waits until the writes submitted so far are published
// and answered.
func (c *conn) settle() {
	if !c.unsettled {
		return
	}
	c.unsettled = false
	settled := make(chan struct{})
	select {
	case c.writes <- func() []byte { close(settled); return nil }:
	case <-c.done:
		return
	}
	select {
	case <-settled:
	case <-c.done:
	}
}

// submit (on work) applies w now and queues its answer behind the answers
// of the writes before it, without waiting for it to be durable.
func (c *conn) submit(r json.Number, w database.Write) {
	wait := c.s.Engine.Submit(context.Background(), w)
	c.unsettled = true
	select {
	case c.writes <- func() []byte {
		if _, err := wait(); err != nil {
			return failure(r, err)
		}
		return ok(r)
	}:
	case <-c.done:
	}
}

// shutdown ends the session: listens stop, queued onDisconnect writes run
// with the session's credential, and the outbox closes.
func (c *conn) shutdown() {
	c.once.Do(func() {
		close(c.done)
		c.mu.Lock()
		for _, l := range c.listens {
			l.cancel()
		}
		c.listens = nil
		ops := c.onDisconnect
		c.onDisconnect = nil
		caller := c.caller
		c.mu.Unlock()
		for _, w := range ops {
			w.Caller = caller
			_, _ = c.s.Engine.Write(context.Background(), w)
		}
		c.out.close()
		c.s.mu.Lock()
		delete(c.s.conns, c)
		c.s.mu.Unlock()
	})
}

// receive handles one frame from the client: a keep-alive "0", the frame
// count of a split message, or (part of) a message.
func (c *conn) receive(frame string) error {
	c.mu.Lock()
	if c.frames > 0 {
		// Past maxWireWrite the rest of the message is not kept: its
		// first frame names the request to refuse.
		if c.partialSize += len(frame); c.partialSize <= maxWireWrite {
			c.partial = append(c.partial, frame)
		}
		c.frames--
		if c.frames > 0 {
			c.mu.Unlock()
			return nil
		}
		if c.partialSize > maxWireWrite {
			frame = c.partial[0]
			c.partial, c.partialSize = nil, 0
			c.mu.Unlock()
			return c.tooBig(frame)
		}
		frame = strings.Join(c.partial, "")
		c.partial, c.partialSize = nil, 0
	} else if len(frame) > maxWireWrite {
		c.mu.Unlock()
		return c.tooBig(frame)
	} else if len(frame) <= 6 {
		if n, err := strconv.Atoi(frame); err == nil {
			if n > 1 {
				c.frames = n
			}
			c.mu.Unlock()
			return nil
		}
	}
	c.mu.Unlock()
	return c.message(frame)
}

// envelope is a message: {"t":"d"|"c","d":…}.
type envelope struct {
	T string          `json:"t"`
	D json.RawMessage `json:"d"`
}

// dataMessage is a request {"r":n,"a":action,"b":body}.
type dataMessage struct {
	R json.Number    `json:"r"`
	A string         `json:"a"`
	B map[string]any `json:"b"`
}

var errBadMessage = errors.New("malformed message")

func (c *conn) message(text string) error {
	var env envelope
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		return errBadMessage
	}
	switch env.T {
	case "c":
		var ctl struct {
			T string `json:"t"`
		}
		if err := json.Unmarshal(env.D, &ctl); err != nil {
			return errBadMessage
		}
		if ctl.T == "p" {
			c.enqueue(func() []byte { return []byte(`{"t":"c","d":{"t":"o","d":{}}}`) })
		}
		return nil
	case "d":
		dec := json.NewDecoder(bytes.NewReader(env.D))
		dec.UseNumber()
		var m dataMessage
		if err := dec.Decode(&m); err != nil {
			return errBadMessage
		}
		c.queue(func() { c.request(m) })
		return nil
	}
	return errBadMessage
}

// response is a request's answer {"t":"d","d":{"r":n,"b":{"s":status,"d":data}}}.
func response(r json.Number, status string, data []byte) []byte {
	if r == "" {
		return nil
	}
	b := []byte(`{"t":"d","d":{"r":`)
	b = append(b, r...)
	b = append(b, `,"b":{"s":`...)
	b = database.AppendString(b, status)
	b = append(b, `,"d":`...)
	b = append(b, data...)
	return append(b, "}}}"...)
}

func ok(r json.Number) []byte { return response(r, "ok", []byte(`""`)) }

// failure is a request's answer to err: its status word and message.
func failure(r json.Number, err error) []byte {
	var stale *database.StaleError
	if errors.As(err, &stale) {
		return response(r, "datastale", database.AppendString(nil, "the data changed since the transaction read it"))
	}
	status := "unavailable"
	switch errs.KindOf(err) {
	case errs.PermissionDenied:
		return response(r, "permission_denied", database.AppendString(nil, "Permission denied"))
	case errs.InvalidArgument:
		status = "invalid_data"
	case errs.Unauthenticated:
		status = "invalid_token"
	case errs.FailedPrecondition:
		status = "index_not_defined"
	}
	return response(r, status, database.AppendString(nil, err.Error()))
}

// pathOf reads a request's "p".
func pathOf(b map[string]any) (database.Path, error) {
	s, _ := b["p"].(string)
	return database.ParsePath(s)
}

// request (on work) runs one request at its turn.
func (c *conn) request(m dataMessage) {
	c.mu.Lock()
	caller := c.caller
	c.mu.Unlock()
	ctx := context.Background()
	switch m.A {
	case "s", "appcheck", "unappcheck":
		c.run(func() []byte { return ok(m.R) })
	case "auth", "gauth":
		c.auth(m)
	case "unauth":
		c.mu.Lock()
		c.caller = identity.Principal{}
		c.mu.Unlock()
		c.run(func() []byte { return ok(m.R) })
		c.run(c.rejudge)
	case "p", "m":
		w, err := c.writeOf(m, caller)
		if err != nil {
			c.run(func() []byte { return failure(m.R, err) })
			return
		}
		c.submit(m.R, w)
	case "q":
		c.run(func() []byte { return c.listen(ctx, m, caller) })
	case "n":
		c.run(func() []byte { c.unlisten(m); return ok(m.R) })
	case "g":
		c.run(func() []byte { return c.get(ctx, m, caller) })
	case "o", "om", "oc":
		c.run(func() []byte { return c.queueOnDisconnect(ctx, m, caller) })
	default:
		c.run(func() []byte {
			return response(m.R, "invalid_request", database.AppendString(nil, "unknown action "+m.A))
		})
	}
}

// writeOf is the write a put ("p") or merge ("m") asks for.
func (c *conn) writeOf(m dataMessage, caller identity.Principal) (database.Write, error) {
	p, err := pathOf(m.B)
	if err != nil {
		return database.Write{}, err
	}
	w := database.Write{NS: c.ns, Path: p, Op: database.OpSet, Value: m.B["d"], Caller: caller}
	if m.A == "m" || m.A == "om" {
		w.Op = database.OpUpdate
	}
	if h, ok := m.B["h"].(string); ok {
		w.IfHash = &h
	}
	return w, nil
}

// auth (on work) switches the session's credential: "owner" (gauth, the
// Admin SDKs) or an ID token (auth).
func (c *conn) auth(m dataMessage) {
	cred, _ := m.B["cred"].(string)
	p, err := c.s.authenticate("Bearer "+cred, c.ns)
	if err != nil || cred == "" {
		c.run(func() []byte {
			return response(m.R, "invalid_token", database.AppendString(nil, "Could not parse auth token."))
		})
		return
	}
	c.mu.Lock()
	c.caller = p
	c.mu.Unlock()
	c.run(func() []byte {
		var d any = map[string]any{"auth": nil, "admin": true}
		if !p.Owner {
			d = map[string]any{"auth": p.Claims, "expires": p.Claims["exp"]}
		}
		data, _ := json.Marshal(d)
		return response(m.R, "ok", data)
	})
	c.run(c.rejudge)
}

// wireListen is one of a session's listens.
type wireListen struct {
	path   database.Path
	query  database.Query
	wire   any // the query object as the client sent it, nil for a default listen
	cancel func()
}

// rejudge judges the session's listens again with its credential now and
// revokes those the rules no longer allow, as production does when a
// session's credential or the rules change: the client is told with a
// listen revoked message ("c") and fails the listen with permission_denied.
// It runs as one of the session's jobs, so it comes after the answers
// before it.
func (c *conn) rejudge() []byte {
	c.mu.Lock()
	caller := c.caller
	listens := make(map[string]*wireListen, len(c.listens))
	for k, l := range c.listens {
		listens[k] = l
	}
	c.mu.Unlock()
	for key, l := range listens {
		if c.s.Engine.MayListen(context.Background(), c.ns, l.path, l.query, caller) == nil {
			continue
		}
		c.mu.Lock()
		current := c.listens[key] == l
		if current {
			delete(c.listens, key)
		}
		c.mu.Unlock()
		if !current {
			continue
		}
		l.cancel()
		b := []byte(`{"t":"d","d":{"a":"c","b":{"p":`)
		b = database.AppendString(b, l.path.String())
		if l.wire != nil {
			q, _ := json.Marshal([]any{l.wire})
			b = append(b, `,"q":`...)
			b = append(b, q...)
		}
		c.out.add(append(b, "}}}"...))
	}
	return nil
}

// wireQuery reads a listen's or get's query object {sp, sn, sin, ep, en,
// ein, l, vf, i}.
func wireQuery(raw any) (database.Query, error) {
	var q database.Query
	obj, _ := raw.(map[string]any)
	if obj == nil {
		return q, nil
	}
	if i, ok := obj["i"].(string); ok {
		ix, err := database.ParseIndex(i)
		if err != nil {
			return q, err
		}
		q.Index = ix
	}
	bound := func(value, name, inclusive string) (*database.Bound, error) {
		v, ok := obj[value]
		if !ok {
			return nil, nil
		}
		n, err := database.FromValue(v, nil, nil)
		if err != nil {
			return nil, err
		}
		b := &database.Bound{Value: n, Inclusive: true}
		if k, ok := obj[name].(string); ok {
			b.Key, b.HasKey = k, true
		}
		if inc, ok := obj[inclusive].(bool); ok {
			b.Inclusive = inc
		}
		return b, nil
	}
	var err error
	if q.Start, err = bound("sp", "sn", "sin"); err != nil {
		return q, err
	}
	if q.End, err = bound("ep", "en", "ein"); err != nil {
		return q, err
	}
	if l, ok := obj["l"].(json.Number); ok {
		n, err := strconv.Atoi(string(l))
		if err != nil || n < 0 {
			return q, errs.New(errs.InvalidArgument, "invalid limit")
		}
		q.Limit, q.HasLimit = n, true
		q.FromRight = obj["vf"] == "r"
	}
	return q, nil
}

// listenKey names a listen: its path and tag (untagged listens are the
// location's default query).
func listenKey(p database.Path, b map[string]any) string {
	tag := "default"
	if t, ok := b["t"].(json.Number); ok {
		tag = string(t)
	}
	return p.String() + "|" + tag
}

// target reads a listen's or get's path and query.
func target(b map[string]any) (database.Path, database.Query, error) {
	p, err := pathOf(b)
	if err != nil {
		return nil, database.Query{}, err
	}
	q, err := wireQuery(b["q"])
	return p, q, err
}

func (c *conn) listen(ctx context.Context, m dataMessage, caller identity.Principal) []byte {
	p, q, err := target(m.B)
	if err != nil {
		return failure(m.R, err)
	}
	tag, _ := m.B["t"].(json.Number)
	var warnings []byte
	if q.Filtered() && !c.s.Engine.Indexed(c.ns, p, q.Index) {
		if c.s.StrictIndexes {
			return failure(m.R, errs.Errorf(errs.FailedPrecondition, "Index not defined, add \".indexOn\": \"%s\", for path \"%s\", to the rules", q.Index, p))
		}
		warnings = []byte(`{"w":["no_index"]}`)
	}
	key := listenKey(p, m.B)
	c.mu.Lock()
	if old, ok := c.listens[key]; ok {
		old.cancel()
		delete(c.listens, key)
	}
	c.mu.Unlock()
	cancel, err := c.s.Engine.Listen(ctx, c.ns, p, q, caller, func(u database.Update) {
		c.out.add(u.Encoded("ws\x00"+string(tag), func() []byte { return push(u, tag) }))
	})
	if err != nil {
		return failure(m.R, err)
	}
	c.mu.Lock()
	if c.listens == nil { // the session ended meanwhile
		c.mu.Unlock()
		cancel()
		return nil
	}
	var wire any
	if _, tagged := m.B["t"]; tagged {
		wire = m.B["q"]
	}
	c.listens[key] = &wireListen{path: p, query: q, wire: wire, cancel: cancel}
	c.mu.Unlock()
	if warnings == nil {
		warnings = []byte("{}")
	}
	return response(m.R, "ok", warnings)
}

// push is a data message for an update: "d" (set) or "m" (merge) with the
// listen's tag.
func push(u database.Update, tag json.Number) []byte {
	b := []byte(`{"t":"d","d":{"a":"d","b":{"p":`)
	if u.Merge {
		b = []byte(`{"t":"d","d":{"a":"m","b":{"p":`)
	}
	b = database.AppendString(b, strings.Join(u.Path, "/"))
	b = append(b, `,"d":`...)
	if u.Merge {
		b = append(b, mergeJSON(u.Children, true)...)
	} else {
		b = u.Value.AppendJSON(b, true)
	}
	if tag != "" {
		b = append(b, `,"t":`...)
		b = append(b, tag...)
	}
	return append(b, "}}}"...)
}

func (c *conn) unlisten(m dataMessage) {
	p, err := pathOf(m.B)
	if err != nil {
		return
	}
	key := listenKey(p, m.B)
	c.mu.Lock()
	l := c.listens[key]
	delete(c.listens, key)
	c.mu.Unlock()
	if l != nil {
		l.cancel()
	}
}

func (c *conn) get(ctx context.Context, m dataMessage, caller identity.Principal) []byte {
	p, q, err := target(m.B)
	if err != nil {
		return failure(m.R, err)
	}
	n, err := c.s.Engine.Get(ctx, c.ns, p, q, caller)
	if err != nil {
		return failure(m.R, err)
	}
	return response(m.R, "ok", n.ExportJSON())
}

// queueOnDisconnect records (o, om) or cancels (oc) writes to run when the
// session ends; a write the rules would refuse now is refused now.
func (c *conn) queueOnDisconnect(ctx context.Context, m dataMessage, caller identity.Principal) []byte {
	p, err := pathOf(m.B)
	if err != nil {
		return failure(m.R, err)
	}
	if m.A == "oc" {
		c.mu.Lock()
		kept := c.onDisconnect[:0]
		for _, w := range c.onDisconnect {
			if !w.Path.HasPrefix(p) {
				kept = append(kept, w)
			}
		}
		c.onDisconnect = kept
		c.mu.Unlock()
		return ok(m.R)
	}
	w, err := c.writeOf(m, caller)
	if err != nil {
		return failure(m.R, err)
	}
	if err := c.s.Engine.Check(ctx, w); err != nil {
		return failure(m.R, err)
	}
	c.mu.Lock()
	c.onDisconnect = append(c.onDisconnect, w)
	c.mu.Unlock()
	return ok(m.R)
}

// serveWebSocket runs a session over a WebSocket (/.ws?v=5&ns=…).
func (s *Service) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	ns := s.namespace(r)
	if err := database.CheckNamespace(ns); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ws, err := websocket.Upgrade(w, r, maxMessage)
	if err != nil {
		http.Error(w, "expected a WebSocket upgrade", http.StatusBadRequest)
		return
	}
	c := newConn(s, ns)
	// The Node SDKs send their credential as a header too; the session
	// starts with it, and their auth request confirms it.
	if p, err := s.authenticate(r.Header.Get("Authorization"), ns); err == nil && r.Header.Get("Authorization") != "" {
		c.caller = p
	}
	c.out.mu.Lock()
	c.out.drop = func() { _ = ws.Close() }
	c.out.mu.Unlock()
	c.out.add(c.hello(r.Host))
	go func() {
		defer ws.Close()
		for {
			msgs, ok := c.out.take(nil)
			if !ok {
				return
			}
			err := ws.WriteTexts(msgs)
			c.out.sent()
			if err != nil {
				return
			}
		}
	}()
	for {
		frame, err := ws.Read()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.env.Logger.Debug("database websocket closed", "err", err)
			}
			break
		}
		if err := c.receive(frame); err != nil {
			s.env.Logger.Debug("database websocket: bad message", "err", err)
			break
		}
	}
	c.shutdown()
	ws.Close()
}
