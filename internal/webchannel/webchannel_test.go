package webchannel_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/webchannel"
)

// echo is a stream that records what it receives and can send.
type echo struct {
	mu       sync.Mutex
	received []string
	closed   bool
	send     func([]byte)
}

func (e *echo) Receive(msg []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.received = append(e.received, string(msg))
}

func (e *echo) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
}

func (e *echo) state() ([]string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.received...), e.closed
}

type fixture struct {
	srv     *httptest.Server
	handler *webchannel.Handler
	mu      sync.Mutex
	streams []*echo
	headers []http.Header
}

func newFixture(t *testing.T, opts webchannel.Options) *fixture {
	t.Helper()
	f := &fixture{}
	f.handler = webchannel.NewHandler(func(h http.Header, _ url.Values, send func([]byte)) (webchannel.Stream, error) {
		s := &echo{send: send}
		f.mu.Lock()
		f.streams = append(f.streams, s)
		f.headers = append(f.headers, h)
		f.mu.Unlock()
		return s, nil
	}, opts)
	f.srv = httptest.NewServer(f.handler)
	t.Cleanup(func() {
		f.srv.Close()
		f.handler.Close()
	})
	return f
}

func (f *fixture) stream(i int) *echo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streams[i]
}

func (f *fixture) post(t *testing.T, query string, form url.Values) (int, string) {
	t.Helper()
	resp, err := http.Post(f.srv.URL+"/channel?VER=8&"+query, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// open performs the handshake and returns the session id.
func (f *fixture) open(t *testing.T, form url.Values) string {
	t.Helper()
	code, body := f.post(t, "RID=1&CVER=22&zx=a&t=1", form)
	if code != http.StatusOK || !strings.Contains(body, `["c","`) {
		t.Fatalf("handshake = %d %q", code, body)
	}
	return strings.Split(body, `"`)[3]
}

func maps(ofs int, msgs ...string) url.Values {
	v := url.Values{"count": {strconv.Itoa(len(msgs))}, "ofs": {strconv.Itoa(ofs)}}
	for i, m := range msgs {
		v.Set("req"+strconv.Itoa(i)+"___data__", m)
	}
	return v
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestHandler_HandshakeCarriesHeadersAndFirstMessages(t *testing.T) {
	f := newFixture(t, webchannel.Options{})
	form := maps(0, `{"database":"d"}`)
	form.Set("headers", "X-Goog-Api-Client:gl-js/ fire/12\r\nAuthorization:Bearer abc\r\n")
	f.open(t, form)
	got, _ := f.stream(0).state()
	if len(got) != 1 || got[0] != `{"database":"d"}` || f.headers[0].Get("Authorization") != "Bearer abc" {
		t.Errorf("received %q with headers %v", got, f.headers[0])
	}
}

func TestHandler_ForwardMapsInOrderOnceEach(t *testing.T) {
	f := newFixture(t, webchannel.Options{})
	sid := f.open(t, maps(0, `0`))
	for _, batch := range []url.Values{maps(2, `2`, `3`), maps(1, `1`), maps(1, `1`, `2`), maps(4, `4`)} {
		if code, body := f.post(t, "SID="+sid+"&RID=2&AID=0", batch); code != http.StatusOK {
			t.Fatalf("forward = %d %q", code, body)
		}
	}
	got, _ := f.stream(0).state()
	if strings.Join(got, ",") != "0,1,2,3,4" {
		t.Errorf("received %v, want 0..4 in order, once each", got)
	}
}

// TestHandler_BadInput: malformed requests get 4xx; the session survives
// and nothing reaches the stream.
func TestHandler_BadInput(t *testing.T) {
	f := newFixture(t, webchannel.Options{MaxBody: 1024})
	sid := f.open(t, url.Values{})
	for _, c := range []struct {
		name  string
		query string
		form  url.Values
		want  int
	}{
		{"count not a number", "SID=" + sid, url.Values{"count": {"x"}, "ofs": {"0"}}, 400},
		{"negative ofs", "SID=" + sid, url.Values{"count": {"1"}, "ofs": {"-1"}, "req0___data__": {"{}"}}, 400},
		{"missing map", "SID=" + sid, url.Values{"count": {"2"}, "ofs": {"0"}, "req0___data__": {"{}"}}, 400},
		{"not JSON", "SID=" + sid, maps(0, `{"unterminated`), 400},
		{"too many maps", "SID=" + sid, url.Values{"count": {"100000"}, "ofs": {"0"}}, 400},
		{"body too large", "SID=" + sid, maps(0, `"`+strings.Repeat("x", 2048)+`"`), 413},
		{"unknown session", "SID=nope", maps(0, `{}`), 400},
		{"handshake not JSON", "", maps(0, `nope`), 400},
	} {
		code, body := f.post(t, c.query, c.form)
		if code != c.want {
			t.Errorf("%s: %d %q, want %d", c.name, code, body, c.want)
		}
	}
	if got, closed := f.stream(0).state(); len(got) != 0 || closed {
		t.Errorf("after bad input the stream got %v (closed %v), want nothing", got, closed)
	}
	if code, _ := f.post(t, "SID="+sid, maps(0, `"fine"`)); code != http.StatusOK {
		t.Errorf("the session did not survive bad input: %d", code)
	}
	resp, _ := http.Get(f.srv.URL + "/channel?VER=8&SID=nope&RID=rpc&CI=0&TYPE=xmlhttp")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "Unknown SID") {
		t.Errorf("back channel of an unknown session = %d %q, want 400 Unknown SID (the SDK reconnects)", resp.StatusCode, body)
	}
}

func TestHandler_LongPollDeliversWithUTF16Lengths(t *testing.T) {
	f := newFixture(t, webchannel.Options{})
	sid := f.open(t, url.Values{})
	f.stream(0).send([]byte(`{"name":"Zürich 😀"}`))
	resp, err := http.Get(f.srv.URL + "/channel?VER=8&SID=" + sid + "&RID=rpc&AID=0&CI=1&TYPE=xmlhttp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	line, _ := r.ReadString('\n')
	payload, _ := io.ReadAll(r)
	n, _ := strconv.Atoi(strings.TrimSpace(line))
	units := 0
	for _, c := range string(payload) {
		units++
		if c >= 0x10000 {
			units++
		}
	}
	if n != units || !strings.Contains(string(payload), `[1,[{"name":"Zürich 😀"}]]`) {
		t.Errorf("chunk %d %q: length must count UTF-16 units (%d)", n, payload, units)
	}
}

func TestHandler_TerminateAndExpiryCloseStreamsWithoutLeaks(t *testing.T) {
	baseline := runtime.NumGoroutine()
	f := newFixture(t, webchannel.Options{Expiry: 100 * time.Millisecond})
	sid := f.open(t, url.Values{})
	f.open(t, url.Values{})
	if code, _ := f.post(t, "SID="+sid+"&TYPE=terminate", url.Values{}); code != http.StatusOK {
		t.Fatalf("terminate = %d", code)
	}
	if _, closed := f.stream(0).state(); !closed {
		t.Error("terminate did not close the stream")
	}
	eventually(t, "the abandoned session to expire", func() bool {
		_, closed := f.stream(1).state()
		return closed && f.handler.Sessions() == 0
	})
	f.srv.CloseClientConnections()
	http.DefaultClient.CloseIdleConnections()
	eventually(t, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= baseline+3 })
}
