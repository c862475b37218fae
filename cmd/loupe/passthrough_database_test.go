package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/loupe-dev/loupe/internal/websocket"
)

// databaseRules lets anyone read and write /open, and only a signed-in
// user write /secure.
const databaseRules = `{"rules": {".read": true, "open": {".write": true}, "secure": {".write": "auth != null"}}}`

// passDatabaseThrough starts an upstream loupe standing in for production,
// with databaseRules on ns, and a loupe emulating only Auth that passes the
// Realtime Database through to it.
func passDatabaseThrough(t *testing.T, ns string) (local, upstream *loupetest.Instance) {
	t.Helper()
	upstream = loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject}})
	if code, out := loupetest.Call(t, "PUT", upstream.URL+"/.settings/rules.json?ns="+ns, databaseRules, "Authorization", "Bearer owner"); code != http.StatusOK {
		t.Fatalf("setting the upstream's rules: %d %v", code, out)
	}
	local = loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject,
		"--only", "auth", "--pass-through", "database", "--upstream", upstream.Host}})
	return local, upstream
}

// TestPassThrough_DatabaseOverREST: the Go Admin SDK's REST calls and an
// event stream, sent to a loupe passing the database through, reach the
// upstream; the owner credential stays behind (the upstream judges the
// write as unauthenticated), and the local request log marks each call.
func TestPassThrough_DatabaseOverREST(t *testing.T) {
	const ns = "passrest"
	local, upstream := passDatabaseThrough(t, ns)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// An event stream through the pass-through, open before the write.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, local.URL+"/open/rooms.json?ns="+ns, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("event stream through the pass-through: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := bufio.NewScanner(resp.Body)
	nextData := func() string {
		t.Helper()
		for events.Scan() {
			if data, ok := strings.CutPrefix(events.Text(), "data: "); ok {
				return data
			}
		}
		t.Fatalf("the event stream ended: %v", events.Err())
		return ""
	}
	if first := nextData(); first != `{"path":"/","data":null}` {
		t.Fatalf("the event stream's first event: %s", first)
	}

	// The Admin SDK (the owner credential) writes through the pass-through.
	client := loupetest.Database(t, local, ns)
	if err := client.NewRef("open/rooms/r1").Set(ctx, map[string]any{"topic": "hello"}); err != nil {
		t.Fatalf("write through the pass-through: %v", err)
	}
	if got := nextData(); got != `{"path":"/r1","data":{"topic":"hello"}}` {
		t.Errorf("the event stream's event for the write: %s", got)
	}
	var topic string
	if err := loupetest.Database(t, upstream, ns).NewRef("open/rooms/r1/topic").Get(ctx, &topic); err != nil || topic != "hello" {
		t.Fatalf("the upstream holds %q, %v; want hello", topic, err)
	}
	// The owner credential was not forwarded: the upstream refuses a write
	// only a signed-in user may make.
	if err := loupetest.Database(t, local, ns).NewRef("secure/x").Set(ctx, 1); err == nil || !strings.Contains(err.Error(), "Permission denied") {
		t.Errorf("a write to /secure as the owner through the pass-through: %v, want Permission denied", err)
	}
	if code, _ := loupetest.Call(t, "PUT", local.URL+"/secure/y.json?ns="+ns+"&auth=owner", "1"); code != http.StatusUnauthorized {
		t.Errorf("PUT /secure with ?auth=owner through the pass-through: %d, want 401", code)
	}
	if !strings.Contains(local.Log(), "was not forwarded") {
		t.Errorf("the local log does not say the credential was held back:\n%s", local.Log())
	}
	cancel()
	resp.Body.Close()

	var sse, put bool
	for deadline := time.Now().Add(10 * time.Second); !(sse && put) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, e := range requestsOf(t, local) {
			if e["service"] != "database" || e["passThrough"] != true || e["database"] != ns {
				continue
			}
			sse = sse || e["method"] == "GET" && e["path"] == "/open/rooms.json" && e["open"] != true && e["ended"] != nil
			put = put || e["method"] == "PUT" && e["path"] == "/open/rooms/r1.json"
		}
	}
	if !sse || !put {
		t.Errorf("the local request log: event stream ended %v, write %v; want both", sse, put)
	}
}

// wsSession is the client's end of a Realtime Database WebSocket session.
type wsSession struct {
	t    *testing.T
	conn *websocket.Conn
}

func (s *wsSession) send(msg string) {
	s.t.Helper()
	if err := s.conn.WriteTexts([][]byte{[]byte(msg)}); err != nil {
		s.t.Fatal(err)
	}
}

// answer reads messages until the answer to request r, and returns its body.
func (s *wsSession) answer(r int) map[string]any {
	s.t.Helper()
	for {
		text, err := s.conn.Read()
		if err != nil {
			s.t.Fatalf("waiting for the answer to request %d: %v", r, err)
		}
		var m struct {
			T string
			D struct {
				R int
				B map[string]any
			}
		}
		if json.Unmarshal([]byte(text), &m) == nil && m.T == "d" && m.D.R == r {
			return m.D.B
		}
	}
}

// TestPassThrough_DatabaseOverWebSocket: a WebSocket session through the
// pass-through is relayed to the upstream: its handshake names loupe's
// host, writes reach the upstream, and an auth request with the owner
// credential goes up as unauth (the upstream refuses a signed-in write).
func TestPassThrough_DatabaseOverWebSocket(t *testing.T) {
	const ns = "passws"
	local, upstream := passDatabaseThrough(t, ns)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	next := requestEvents(t, ctx, local)
	conn, err := websocket.Dial(ctx, "ws://"+local.Host+"/.ws?v=5&ns="+ns, http.Header{"Authorization": {"Bearer owner"}}, 1<<20)
	if err != nil {
		t.Fatalf("WebSocket through the pass-through: %v", err)
	}
	s := &wsSession{t: t, conn: conn}
	hello, err := conn.Read()
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		D struct {
			T string
			D struct{ H string }
		}
	}
	if json.Unmarshal([]byte(hello), &h) != nil || h.D.T != "h" || h.D.D.H != local.Host {
		t.Errorf("the handshake %s, want one naming host %s", hello, local.Host)
	}
	opened := next(func(e map[string]any) bool { return e["path"] == "/.ws" })
	if opened["open"] != true || opened["database"] != ns {
		t.Errorf("the session's entry while open: %v", opened)
	}

	s.send(`{"t":"d","d":{"r":1,"a":"gauth","b":{"cred":"owner"}}}`)
	if b := s.answer(1); b["s"] != "ok" {
		t.Fatalf("auth through the pass-through: %v", b)
	}
	s.send(`{"t":"d","d":{"r":2,"a":"p","b":{"p":"/open/ws","d":{"n":1}}}}`)
	if b := s.answer(2); b["s"] != "ok" {
		t.Errorf("write to /open: %v", b)
	}
	s.send(`{"t":"d","d":{"r":3,"a":"p","b":{"p":"/secure/ws","d":1}}}`)
	if b := s.answer(3); b["s"] != "permission_denied" {
		t.Errorf("write to /secure after auth as the owner: %v, want permission_denied (the owner credential stays behind)", b)
	}
	var n int
	if err := loupetest.Database(t, upstream, ns).NewRef("open/ws/n").Get(ctx, &n); err != nil || n != 1 {
		t.Errorf("the upstream holds n = %d, %v; want 1", n, err)
	}
	conn.Close()
	ended := next(func(e map[string]any) bool { return e["path"] == "/.ws" })
	if ended["id"] != opened["id"] || ended["open"] == true || ended["ended"] == nil {
		t.Errorf("the session's entry once closed: %v", ended)
	}
}

// TestPassThrough_StrictTokensStayBehind: under --strict-credentials the ID
// tokens loupe's own Auth signs are emulator-only too: passed through as a
// REST auth= parameter, a header, or a WebSocket auth request, none
// reaches the upstream (which, an emulator itself, would believe it).
func TestPassThrough_StrictTokensStayBehind(t *testing.T) {
	const ns = "passstrict"
	upstream := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject}})
	if code, out := loupetest.Call(t, "PUT", upstream.URL+"/.settings/rules.json?ns="+ns, databaseRules, "Authorization", "Bearer owner"); code != http.StatusOK {
		t.Fatalf("setting the upstream's rules: %d %v", code, out)
	}
	local := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject, "--strict-credentials",
		"--only", "auth", "--pass-through", "database", "--upstream", upstream.Host}})
	code, out := loupetest.Call(t, "POST", local.URL+"/identitytoolkit.googleapis.com/v1/accounts:signUp?key=demo-api-key",
		`{"email":"ada@example.com","password":"secret-pw","returnSecureToken":true}`)
	token, _ := out["idToken"].(string)
	if code != http.StatusOK || token == "" {
		t.Fatalf("sign-up on the local Auth: %d %v", code, out)
	}
	if code, out := loupetest.Call(t, "PUT", local.URL+"/secure/a.json?ns="+ns+"&auth="+token, "1"); code != http.StatusUnauthorized {
		t.Errorf("PUT /secure with a locally signed auth= through the pass-through: %d %v, want 401", code, out)
	}
	if code, out := loupetest.Call(t, "PUT", local.URL+"/secure/b.json?ns="+ns, "1", "Authorization", "Bearer "+token); code != http.StatusUnauthorized {
		t.Errorf("PUT /secure with a locally signed Authorization through the pass-through: %d %v, want 401", code, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := websocket.Dial(ctx, "ws://"+local.Host+"/.ws?v=5&ns="+ns, nil, 1<<20)
	if err != nil {
		t.Fatalf("WebSocket through the pass-through: %v", err)
	}
	defer conn.Close()
	s := &wsSession{t: t, conn: conn}
	s.send(`{"t":"d","d":{"r":1,"a":"auth","b":{"cred":"` + token + `"}}}`)
	if b := s.answer(1); b["s"] != "ok" {
		t.Fatalf("auth through the pass-through: %v", b)
	}
	s.send(`{"t":"d","d":{"r":2,"a":"p","b":{"p":"/secure/c","d":1}}}`)
	if b := s.answer(2); b["s"] != "permission_denied" {
		t.Errorf("write to /secure after auth with a locally signed token: %v, want permission_denied", b)
	}
}
