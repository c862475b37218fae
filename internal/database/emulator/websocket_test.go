package emulator_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/database"
	"github.com/loupe-dev/loupe/internal/database/emulator"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// wsClient is the client side of RFC 6455 as the JS SDK uses it: masked
// text frames out, the server's unmasked frames in.
type wsClient struct {
	t    testing.TB
	conn net.Conn
	rd   *bufio.Reader
}

// connDeadline is when a test's raw connection stops waiting: shortly before
// the test binary's own timeout, so that a server that never answers fails
// the test with its line, however slow the machine (a fixed few seconds
// failed under -race on a loaded machine while the server was still working).
func connDeadline(t testing.TB) time.Time {
	if tt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := tt.Deadline(); ok {
			return d.Add(-30 * time.Second)
		}
	}
	return time.Now().Add(5 * time.Minute)
}

// dialWS opens a Realtime Database session at path (e.g. /.ws?v=5&ns=x).
func dialWS(t testing.TB, inst *loupetest.Instance, path string) *wsClient {
	t.Helper()
	conn, err := net.Dial("tcp", inst.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(connDeadline(t))
	var key [16]byte
	_, _ = rand.Read(key[:])
	req := "GET " + path + " HTTP/1.1\r\nHost: " + inst.Host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(key[:]) + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(conn)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") == "" {
		t.Fatalf("handshake answered %s %v", resp.Status, resp.Header)
	}
	return &wsClient{t: t, conn: conn, rd: rd}
}

// frame sends one masked frame.
func (c *wsClient) frame(op byte, payload []byte) {
	c.t.Helper()
	if _, err := c.conn.Write(appendFrame(nil, op, payload)); err != nil {
		c.t.Fatal(err)
	}
}

// sendAll sends text messages in one write, so the server reads them
// together, as it does a client's burst.
func (c *wsClient) sendAll(texts ...string) {
	c.t.Helper()
	var b []byte
	for _, t := range texts {
		b = appendFrame(b, 0x1, []byte(t))
	}
	if _, err := c.conn.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// appendFrame appends one masked frame to b.
func appendFrame(b []byte, op byte, payload []byte) []byte {
	b = append(b, 0x80|op)
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	b = append(b, mask[:]...)
	for i, x := range payload {
		b = append(b, x^mask[i%4])
	}
	return b
}

// send sends a text message.
func (c *wsClient) send(text string) { c.t.Helper(); c.frame(0x1, []byte(text)) }

// next reads the next frame: its opcode and payload.
func (c *wsClient) next() (byte, []byte) {
	c.t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(c.rd, h[:]); err != nil {
		c.t.Fatal(err)
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		_, _ = io.ReadFull(c.rd, b[:])
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		_, _ = io.ReadFull(c.rd, b[:])
		n = binary.BigEndian.Uint64(b[:])
	}
	if h[1]&0x80 != 0 {
		c.t.Fatal("a server frame is masked")
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(c.rd, p); err != nil {
		c.t.Fatal(err)
	}
	return h[0] & 0x0f, p
}

// wsMsg is a protocol message: {"t":"d"|"c","d":{…}}.
type wsMsg struct {
	T string `json:"t"`
	D struct {
		T string          `json:"t"` // control: h (hello), o (pong)
		R int             `json:"r"` // data: the request answered
		A string          `json:"a"` // data: the push's action (d, m, c)
		B json.RawMessage `json:"b"`
		D json.RawMessage `json:"d"`
	} `json:"d"`
}

// read returns the next message.
func (c *wsClient) read() wsMsg {
	c.t.Helper()
	op, p := c.next()
	if op != 0x1 {
		c.t.Fatalf("frame opcode %d, want text", op)
	}
	var m wsMsg
	if err := json.Unmarshal(p, &m); err != nil {
		c.t.Fatalf("message %s: %v", p, err)
	}
	return m
}

// answer reads until request r is answered, returning its status and data
// and the pushes seen meanwhile, as "action path data" strings.
func (c *wsClient) answer(r int) (status, data string, pushes []string) {
	c.t.Helper()
	for {
		m := c.read()
		if m.T != "d" {
			continue
		}
		if m.D.A != "" {
			var b struct {
				P string          `json:"p"`
				D json.RawMessage `json:"d"`
			}
			_ = json.Unmarshal(m.D.B, &b)
			pushes = append(pushes, m.D.A+" "+b.P+" "+string(b.D))
			continue
		}
		if m.D.R == r {
			var b struct {
				S string          `json:"s"`
				D json.RawMessage `json:"d"`
			}
			_ = json.Unmarshal(m.D.B, &b)
			return b.S, string(b.D), pushes
		}
	}
}

// rawGet is the body of a GET of url, as the REST API answers it.
func rawGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b))
}

// TestWebSocket_Session drives the Realtime Database's wire protocol as
// the JS SDK speaks it over a WebSocket: the server's hello, a keepalive
// answered, the admin credential, a listen that gets the current data and
// then each change (set and merge), a get, a message split over frames,
// the refusals (a bad token, an unknown action), a ping answered with a
// pong, and an onDisconnect write that runs when the socket closes.
func TestWebSocket_Session(t *testing.T) {
	inst := serve(t)
	ws := dialWS(t, inst, "/.ws?v=5&ns=wsdemo")
	hello := ws.read()
	var h struct {
		V string `json:"v"`
		S string `json:"s"`
		H string `json:"h"`
	}
	_ = json.Unmarshal(hello.D.D, &h)
	if hello.T != "c" || hello.D.T != "h" || h.V != "5" || h.S == "" || h.H == "" {
		t.Fatalf("hello = %+v %s, want a control h message with version 5, a host and a session", hello, hello.D.D)
	}

	ws.send(`{"t":"c","d":{"t":"p","d":{}}}`)
	if m := ws.read(); m.T != "c" || m.D.T != "o" {
		t.Errorf("keepalive answered %+v, want a control o", m)
	}
	ws.send(`{"t":"d","d":{"r":1,"a":"auth","b":{"cred":"not a token"}}}`)
	if s, _, _ := ws.answer(1); s != "invalid_token" {
		t.Errorf("auth with a bad token: %q, want invalid_token", s)
	}
	ws.send(`{"t":"d","d":{"r":2,"a":"gauth","b":{"cred":"owner"}}}`)
	if s, _, _ := ws.answer(2); s != "ok" {
		t.Fatalf("gauth owner: %q", s)
	}
	ws.send(`{"t":"d","d":{"r":3,"a":"p","b":{"p":"/items/a","d":{"n":1}}}}`)
	if s, _, _ := ws.answer(3); s != "ok" {
		t.Fatalf("put: %q", s)
	}
	ws.send(`{"t":"d","d":{"r":4,"a":"q","b":{"p":"/items","h":""}}}`)
	s, _, pushes := ws.answer(4)
	if s != "ok" || len(pushes) != 1 || pushes[0] != `d items {"a":{"n":1}}` {
		t.Fatalf("listen: %q with pushes %q, want ok after the current data", s, pushes)
	}
	ws.send(`{"t":"d","d":{"r":5,"a":"m","b":{"p":"/items","d":{"b":{"n":2}}}}}`)
	s, _, pushes = ws.answer(5)
	if s != "ok" || strings.Join(pushes, ";") != `m items {"b":{"n":2}}` {
		t.Errorf("merge: %q with pushes %q, want a merge push of b", s, pushes)
	}
	// A message split over frames: the count first, then the parts.
	msg := `{"t":"d","d":{"r":6,"a":"g","b":{"p":"/items","q":{}}}}`
	ws.send("2")
	ws.send(msg[:20])
	ws.send(msg[20:])
	s, data, _ := ws.answer(6)
	if s != "ok" || data != `{"a":{"n":1},"b":{"n":2}}` {
		t.Errorf("get over two frames: %q %s", s, data)
	}
	ws.send(`{"t":"d","d":{"r":7,"a":"n","b":{"p":"/items"}}}`)
	if s, _, _ := ws.answer(7); s != "ok" {
		t.Errorf("unlisten: %q, want ok", s)
	}
	ws.send(`{"t":"d","d":{"r":71,"a":"g","b":{"p":"/nothing","q":{}}}}`)
	if s, data, _ := ws.answer(71); s != "ok" || data != "null" {
		t.Errorf("get of a missing path: %q %s, want ok null", s, data)
	}
	ws.send(`{"t":"d","d":{"r":8,"a":"p","b":{"p":"/items/c","d":3}}}`)
	if s, _, pushes := ws.answer(8); s != "ok" || len(pushes) != 0 {
		t.Errorf("write after unlisten: %q, pushes %q, want none", s, pushes)
	}
	ws.send(`{"t":"d","d":{"r":9,"a":"zz","b":{}}}`)
	if s, _, _ := ws.answer(9); s != "invalid_request" {
		t.Errorf("unknown action: %q, want invalid_request", s)
	}
	ws.send(`{"t":"d","d":{"r":10,"a":"o","b":{"p":"/presence/me","d":"offline"}}}`)
	if s, _, _ := ws.answer(10); s != "ok" {
		t.Fatalf("onDisconnect put: %q", s)
	}
	ws.frame(0x9, []byte("hi"))
	if op, p := ws.next(); op != 0xa || string(p) != "hi" {
		t.Errorf("ping answered with opcode %d %q, want a pong echoing it", op, p)
	}
	if out := rawGet(t, inst.URL+"/presence/me.json?ns=wsdemo"); out != "null" {
		t.Fatalf("before the disconnect presence/me = %s, want null", out)
	}
	ws.frame(0x8, []byte{0x03, 0xe8})
	if op, p := ws.next(); op != 0x8 || len(p) != 2 || p[0] != 0x03 || p[1] != 0xe8 {
		t.Errorf("close answered with opcode %d %v, want a close echoing 1000", op, p)
	}
	loupetest.Eventually(t, "the onDisconnect write", func() bool {
		return rawGet(t, inst.URL+"/presence/me.json?ns=wsdemo") == `"offline"`
	})
}

// trace reads until request last is answered and returns what came, in
// order: "r status" for an answer, "action path data" for a push.
func (c *wsClient) trace(last int) []string {
	c.t.Helper()
	var seen []string
	for {
		m := c.read()
		if m.T != "d" {
			continue
		}
		var b struct {
			P string          `json:"p"`
			S string          `json:"s"`
			D json.RawMessage `json:"d"`
		}
		_ = json.Unmarshal(m.D.B, &b)
		if m.D.A != "" {
			seen = append(seen, m.D.A+" "+b.P+" "+string(b.D))
			continue
		}
		seen = append(seen, strconv.Itoa(m.D.R)+" "+b.S)
		if m.D.R == last {
			return seen
		}
	}
}

// TestWebSocket_RequestsTakeEffectInOrder sends a session's requests in
// one burst, as the SDKs pipeline them, and expects each to take effect in
// the order sent, as production does: a listen sent before a write gets
// the data before the write and then the write's change; a write sent
// after an unlisten is not pushed to the removed listen; every request is
// answered, in order (an unlisten too).
func TestWebSocket_RequestsTakeEffectInOrder(t *testing.T) {
	inst := serve(t)
	ws := dialWS(t, inst, "/.ws?v=5&ns=wsorder")
	ws.read() // hello
	ws.send(`{"t":"d","d":{"r":1,"a":"gauth","b":{"cred":"owner"}}}`)
	if s, _, _ := ws.answer(1); s != "ok" {
		t.Fatalf("gauth owner: %q", s)
	}
	// Several rounds: before loupe ran a session's requests in order, its
	// writes raced the listens and unlistens sent before them.
	for i := range 20 {
		p := "order/" + strconv.Itoa(i)
		r := 10 * (i + 1)
		req := func(n int, a, body string) string {
			return `{"t":"d","d":{"r":` + strconv.Itoa(r+n) + `,"a":"` + a + `","b":{"p":"/` + p + `"` + body + `}}}`
		}
		ws.sendAll(
			req(0, "p", `,"d":"old"`),
			req(1, "q", `,"h":""`),
			req(2, "p", `,"d":"new"`),
			req(3, "n", ``),
			req(4, "p", `,"d":"gone"`),
		)
		got := strings.Join(ws.trace(r+4), "; ")
		want := strings.Join([]string{
			strconv.Itoa(r) + " ok",
			`d ` + p + ` "old"`, strconv.Itoa(r+1) + " ok",
			`d ` + p + ` "new"`, strconv.Itoa(r+2) + " ok",
			strconv.Itoa(r+3) + " ok",
			strconv.Itoa(r+4) + " ok",
		}, "; ")
		if got != want {
			t.Fatalf("round %d: the burst put, listen, put, unlisten, put came back as\n  %s\nwant\n  %s", i, got, want)
		}
	}
}

// gatedListens holds each listen at /big in its rules check until the test
// releases it: a listen whose rules take their time, as over a large tree.
type gatedListens struct{ entered, release chan struct{} }

func (g gatedListens) Read(_ context.Context, a database.ReadAccess) error {
	if a.Method == "listen" && len(a.Path) > 0 && a.Path[0] == "big" {
		g.entered <- struct{}{}
		<-g.release
	}
	return nil
}

func (gatedListens) Write(context.Context, database.WriteAccess) error { return nil }

// TestWebSocket_ASlowListenHoldsUpOnlyItsOwnSession keeps one session's
// listen at /big in its rules check while another session writes to a
// location it listens to: that session gets its change and its answer at
// once. The slow listen then gets the data as it was when it started,
// followed by the change made to it meanwhile, once.
func TestWebSocket_ASlowListenHoldsUpOnlyItsOwnSession(t *testing.T) {
	gate := gatedListens{entered: make(chan struct{}), release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(gate.release) }) }
	url := emulator.ServeSessions(t, gate)
	inst := &loupetest.Instance{URL: url, Host: strings.TrimPrefix(url, "http://")}
	t.Cleanup(release) // before the server closes, even when a check failed
	fast := dialWS(t, inst, "/.ws?v=5&ns=slow")
	fast.read() // hello
	fast.send(`{"t":"d","d":{"r":1,"a":"p","b":{"p":"/big","d":{"a":1,"b":2}}}}`)
	fast.send(`{"t":"d","d":{"r":2,"a":"q","b":{"p":"/small","h":""}}}`)
	if got := strings.Join(fast.trace(2), "; "); got != "1 ok; d small null; 2 ok" {
		t.Fatalf("put and listen: %s", got)
	}
	slow := dialWS(t, inst, "/.ws?v=5&ns=slow")
	slow.read() // hello
	slow.send(`{"t":"d","d":{"r":1,"a":"q","b":{"p":"/big","h":""}}}`)
	<-gate.entered
	fast.send(`{"t":"d","d":{"r":3,"a":"p","b":{"p":"/small","d":1}}}`)
	fast.send(`{"t":"d","d":{"r":4,"a":"p","b":{"p":"/big/c","d":3}}}`)
	if got := strings.Join(fast.trace(4), "; "); got != "d small 1; 3 ok; 4 ok" {
		t.Fatalf("while another session's listen was judged, the puts came back as %s", got)
	}
	release()
	slow.send(`{"t":"d","d":{"r":2,"a":"g","b":{"p":"/big","q":{}}}}`)
	want := `d big {"a":1,"b":2}; d big/c 3; 1 ok; 2 ok`
	if got := strings.Join(slow.trace(2), "; "); got != want {
		t.Fatalf("the slow listen got\n  %s\nwant\n  %s", got, want)
	}
}
