package passthrough_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/loupe-dev/loupe/internal/passthrough"
	"github.com/loupe-dev/loupe/internal/requestlog"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/websocket"
)

// serveDatabase serves a pass-through of the Realtime Database to upstream
// and returns its host:port and request log.
func serveDatabase(t *testing.T, upstream string) (string, *requestlog.Log) {
	t.Helper()
	log := requestlog.New(100)
	pt, err := passthrough.New(passthrough.Options{Services: []string{"database"}, Upstream: upstream, Project: "demo-prod",
		Log: log, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Options{ProjectID: "demo-prod", Logger: slog.New(slog.DiscardHandler)}, []server.Service{pt})
	if err := srv.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Close()
	})
	return strings.TrimPrefix(hs.URL, "http://"), log
}

// dialThrough opens a WebSocket session of namespace hostile through the
// pass-through at host.
func dialThrough(t *testing.T, host string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := websocket.Dial(ctx, "ws://"+host+"/.ws?v=5&ns=hostile", nil, 32<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// sessionEnd waits for the relayed session's request log entry to end.
func sessionEnd(t *testing.T, log *requestlog.Log) requestlog.Entry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var rev int64
	for {
		entries, now := log.Changed(rev, nil)
		for _, e := range entries {
			if e.Path == "/.ws" && !e.Open {
				return e
			}
		}
		if !log.WaitChange(ctx, now) {
			t.Fatal("the relayed session did not end")
		}
		rev = now
	}
}

// TestDatabaseRelay_AClientThatNeverReadsIsDropped: a caller that listens
// to a large node and never reads its WebSocket is dropped once a write to
// it stalls, rather than holding the relay (and the upstream session) open.
func TestDatabaseRelay_AClientThatNeverReadsIsDropped(t *testing.T) {
	defer passthrough.SetRelayTimeouts(200*time.Millisecond, 30*time.Second)()
	upstream := loupetest.Start(t, loupetest.Options{InMemory: true})
	chunk := `"` + strings.Repeat("x", 4<<20) + `"`
	for _, key := range []string{"a", "b", "c"} {
		if code, out := loupetest.Call(t, "PUT", upstream.URL+"/big/"+key+".json?ns=hostile", chunk, "Authorization", "Bearer owner"); code != 200 {
			t.Fatalf("writing /big/%s upstream: %d %v", key, code, out)
		}
	}
	host, log := serveDatabase(t, upstream.Host)
	conn := dialThrough(t, host)
	if err := conn.WriteTexts([][]byte{[]byte(`{"t":"d","d":{"r":1,"a":"q","b":{"p":"/big","h":""}}}`)}); err != nil {
		t.Fatal(err)
	}
	// The caller reads nothing from here on.
	if e := sessionEnd(t, log); !strings.Contains(e.Message, "the client: ") {
		t.Errorf("the session ended with %q, want a stalled write to the client", e.Message)
	}
}

// TestDatabaseRelay_AnUpstreamThatNeverAnswers: an upstream that accepts
// the connection and never answers the handshake gets the caller a 502
// once the dial times out, logged as an error.
func TestDatabaseRelay_AnUpstreamThatNeverAnswers(t *testing.T) {
	defer passthrough.SetRelayTimeouts(time.Minute, 200*time.Millisecond)()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	host, log := serveDatabase(t, silent.Addr().String())
	_, err = websocket.Dial(context.Background(), "ws://"+host+"/.ws?v=5&ns=hostile", nil, 1<<20)
	var refused *websocket.HandshakeError
	if !errors.As(err, &refused) || refused.Status != http.StatusBadGateway {
		t.Fatalf("WebSocket through a pass-through to a silent upstream: %v, want a 502", err)
	}
	if e := sessionEnd(t, log); e.Status != http.StatusBadGateway || e.Outcome != requestlog.Error {
		t.Errorf("the session's entry: %+v, want a 502 error", e)
	}
}

// TestPassThrough_AnUpstreamThatNeverAnswersIsA502: a passed-through HTTP
// request (the Realtime Database's REST API here) to an upstream that takes
// the connection and never answers ends, once the upstream's answer is
// overdue, as a 502 that names the upstream, recorded as an error.
func TestPassThrough_AnUpstreamThatNeverAnswersIsA502(t *testing.T) {
	defer passthrough.SetUpstreamHeaderTimeout(200 * time.Millisecond)()
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	defer silent.Close()
	host, log := serveDatabase(t, strings.TrimPrefix(silent.URL, "http://"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/scores.json?ns=hostile", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET through a pass-through to a silent upstream: %v, want a 502", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "did not answer") {
		t.Errorf("GET through a pass-through to a silent upstream: %d %s, want a 502 saying the upstream did not answer", res.StatusCode, body)
	}
	entries, _ := log.Changed(0, nil)
	if len(entries) != 1 || entries[0].Status != http.StatusBadGateway || entries[0].Outcome != requestlog.Error {
		t.Errorf("the request log: %+v, want the GET as a 502 error", entries)
	}
}

// TestDatabaseRelay_AnOversizedMessageEndsTheSession: a caller's message
// over the 16 MB production takes ends the session; nothing of it reaches
// the upstream.
func TestDatabaseRelay_AnOversizedMessageEndsTheSession(t *testing.T) {
	upstream := loupetest.Start(t, loupetest.Options{InMemory: true})
	host, log := serveDatabase(t, upstream.Host)
	conn := dialThrough(t, host)
	// A count frame, then frames past 17 MB in all.
	frames := [][]byte{[]byte("5")}
	for range 5 {
		frames = append(frames, []byte(`{"t":"d","d":{"r":1,"a":"p","b":{"p":"/huge","d":"`+strings.Repeat("y", 4<<20)+`"}}}`))
	}
	_ = conn.WriteTexts(frames) // the relay may close before it has read them all
	if e := sessionEnd(t, log); !strings.Contains(e.Message, "over 16 MB") {
		t.Errorf("the session ended with %q, want the oversized message named", e.Message)
	}
	if code, out := loupetest.Call(t, "GET", upstream.URL+"/huge.json?ns=hostile", "", "Authorization", "Bearer owner"); code != 200 || len(out) != 0 {
		t.Errorf("the upstream's /huge: %d %v, want nothing there", code, out)
	}
}
