package webchannel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
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

	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/loupe-dev/loupe/internal/webchannel"
	"github.com/loupe-dev/loupe/internal/webchannel/wctest"
)

// echo is a stream that records what it receives and sends it back.
type echo struct {
	mu       sync.Mutex
	received []string
	closed   bool
	send     func([]byte)
}

func (e *echo) Receive(msg []byte) {
	e.mu.Lock()
	e.received = append(e.received, string(msg))
	e.mu.Unlock()
	e.send(msg)
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
	return f.postRaw(t, query, form.Encode())
}

func (f *fixture) postRaw(t *testing.T, query, form string) (int, string) {
	t.Helper()
	resp, err := http.Post(f.srv.URL+"/channel?VER=8&"+query, "application/x-www-form-urlencoded", strings.NewReader(form))
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
		{"ofs past int32", "SID=" + sid, maps(9223372036854775807, `{}`), 400},
		{"map ids far ahead (a gap never filled)", "SID=" + sid, maps(5000, `{}`), 400},
		{"map sent twice in one request", "SID=" + sid, url.Values{"count": {"1"}, "ofs": {"0"}, "req0___data__": {"1", "2"}}, 400},
		{"bad escape", "SID=" + sid, nil, 400},
		{"unknown session", "SID=nope", maps(0, `{}`), 400},
		{"handshake not JSON", "", maps(0, `nope`), 400},
		{"handshake too large", "", maps(0, `"`+strings.Repeat("x", 2048)+`"`), 413},
		{"handshake map ids far ahead", "", maps(5000, `{}`), 400},
	} {
		raw := c.form.Encode()
		if c.form == nil {
			raw = "count=1&ofs=0&req0___data__=%zz"
		}
		code, body := f.postRaw(t, c.query, raw)
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
	loupetest.Eventually(t, "the abandoned session to expire", func() bool {
		_, closed := f.stream(1).state()
		return closed && f.handler.Sessions() == 0
	})
	f.srv.CloseClientConnections()
	http.DefaultClient.CloseIdleConnections()
	loupetest.Eventually(t, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= baseline+3 })
}

// backChannel opens a back-channel GET (CI=0 streaming, CI=1 long polling)
// and returns its reader; cancel aborts it, as a closing tab does.
func (f *fixture) backChannel(t *testing.T, sid string, aid, ci int, extra string) (*bufio.Reader, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/channel?VER=8&SID=%s&RID=rpc&AID=%d&CI=%d&TYPE=xmlhttp%s", f.srv.URL, sid, aid, ci, extra), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
	})
	return bufio.NewReader(resp.Body), cancel
}

func TestHandler_BackChannelStreamsEachArrayInOrder(t *testing.T) {
	f := newFixture(t, webchannel.Options{})
	sid := f.open(t, maps(0, `"a"`))
	bc, _ := f.backChannel(t, sid, 0, 0, "")
	if got, err := wctest.ReadChunk(bc); got != `[[1,["a"]]]` {
		t.Fatalf("first chunk %q (%v)", got, err)
	}
	for i, m := range []string{`"b"`, `{"x":1}`} {
		f.post(t, "SID="+sid+"&RID=2&AID=1", maps(i+1, m))
		if got, err := wctest.ReadChunk(bc); got != fmt.Sprintf("[[%d,[%s]]]", i+2, m) {
			t.Errorf("chunk %q (%v), want array %d carrying %s", got, err, i+2, m)
		}
	}
}

func TestHandler_StreamingKeepAliveSendsNoop(t *testing.T) {
	f := newFixture(t, webchannel.Options{KeepAlive: 50 * time.Millisecond})
	sid := f.open(t, maps(0, `"a"`))
	bc, _ := f.backChannel(t, sid, 1, 0, "")
	if got, err := wctest.ReadChunk(bc); got != `[[2,["noop"]]]` {
		t.Errorf("keep-alive chunk %q (%v), want a noop array", got, err)
	}
}

func TestHandler_LongPoll(t *testing.T) {
	for _, c := range []struct {
		name  string
		aid   int
		post  bool
		extra string
		want  string
	}{
		{"pending data answers at once", 0, false, "", `[[1,["a"]]]`},
		{"holds until data arrives", 1, true, "", `[[2,["b"]]]`},
		{"answers noop at the timeout", 1, false, "", `[[2,["noop"]]]`},
		{"TO shortens the hold", 1, false, "&TO=50", `[[2,["noop"]]]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, webchannel.Options{LongPoll: 300 * time.Millisecond})
			sid := f.open(t, maps(0, `"a"`))
			if c.post {
				time.AfterFunc(50*time.Millisecond, func() {
					_, _ = http.Post(f.srv.URL+"/channel?VER=8&SID="+sid+"&RID=2&AID=1", "application/x-www-form-urlencoded", strings.NewReader(maps(1, `"b"`).Encode()))
				})
			}
			bc, _ := f.backChannel(t, sid, c.aid, 1, c.extra)
			if got, err := wctest.ReadChunk(bc); got != c.want {
				t.Errorf("chunk %q (%v), want %q", got, err, c.want)
			}
			if _, err := wctest.ReadChunk(bc); err != io.EOF {
				t.Errorf("the long poll did not end after its data: %v", err)
			}
		})
	}
}

func TestHandler_AckDropsArraysAndUnackedOnesAreResent(t *testing.T) {
	f := newFixture(t, webchannel.Options{})
	sid := f.open(t, maps(0, `"a"`))
	f.post(t, "SID="+sid+"&RID=2&AID=0", maps(1, `"b"`, `"c"`))
	bc, cancel := f.backChannel(t, sid, 0, 0, "")
	if got, _ := wctest.ReadChunk(bc); got != `[[1,["a"]],[2,["b"]],[3,["c"]]]` {
		t.Fatalf("first back channel %q", got)
	}
	cancel() // the tab lost the response: only AID counts as delivered
	bc, _ = f.backChannel(t, sid, 1, 0, "")
	if got, _ := wctest.ReadChunk(bc); got != `[[2,["b"]],[3,["c"]]]` {
		t.Errorf("after AID=1 the back channel sent %q, want arrays 2 and 3 again", got)
	}
	bc, _ = f.backChannel(t, sid, 3, 1, "")
	f.post(t, "SID="+sid+"&RID=3&AID=3", maps(3, `"d"`))
	if got, _ := wctest.ReadChunk(bc); got != `[[4,["d"]]]` {
		t.Errorf("after AID=3 the back channel sent %q, want only array 4", got)
	}
}

func TestHandler_NewBackChannelReplacesTheOld(t *testing.T) {
	f := newFixture(t, webchannel.Options{Expiry: 100 * time.Millisecond})
	sid := f.open(t, maps(0, `"a"`))
	old, _ := f.backChannel(t, sid, 0, 0, "")
	_, _ = wctest.ReadChunk(old)
	bc, _ := f.backChannel(t, sid, 1, 0, "")
	if _, err := wctest.ReadChunk(old); err == nil {
		t.Error("the old back channel is still open after a new one")
	}
	if code, body := f.post(t, "SID="+sid+"&RID=2&AID=1", maps(1, `"b"`)); code != 200 {
		t.Fatalf("forward = %d %q", code, body)
	}
	if got, _ := wctest.ReadChunk(bc); got != `[[2,["b"]]]` {
		t.Errorf("the new back channel sent %q", got)
	}
	time.Sleep(300 * time.Millisecond) // past Expiry: the open back channel keeps the session
	if f.handler.Sessions() != 1 {
		t.Error("the session expired while its new back channel was open")
	}
}

func TestHandler_TerminateEndsTheSession(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodGet} { // sendBeacon or an image
		t.Run(method, func(t *testing.T) {
			f := newFixture(t, webchannel.Options{})
			sid := f.open(t, maps(0, `"a"`))
			bc, _ := f.backChannel(t, sid, 0, 0, "")
			_, _ = wctest.ReadChunk(bc)
			req, _ := http.NewRequest(method, f.srv.URL+"/channel?VER=8&SID="+sid+"&RID=5&TYPE=terminate", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("terminate = %d", resp.StatusCode)
			}
			if _, closed := f.stream(0).state(); !closed {
				t.Error("terminate did not close the stream")
			}
			if _, err := wctest.ReadChunk(bc); err == nil {
				t.Error("the back channel is still open after terminate")
			}
			if code, body := f.post(t, "SID="+sid+"&RID=6&AID=1", maps(1, `"b"`)); code != 400 || !strings.Contains(body, "Unknown SID") {
				t.Errorf("after terminate a POST got %d %q, want 400 Unknown SID", code, body)
			}
		})
	}
}

// TestHandler_ConcurrentPostsKeepOrder sends each session's maps in
// concurrent POSTs, in any arrival order; run with -race.
func TestHandler_ConcurrentPostsKeepOrder(t *testing.T) {
	f := newFixture(t, webchannel.Options{})
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			sid := f.open(t, maps(0, fmt.Sprintf(`"%d-0"`, c)))
			bc, _ := f.backChannel(t, sid, 0, 0, "")
			var posts sync.WaitGroup
			for i := 1; i <= 20; i++ {
				posts.Go(func() { f.post(t, "SID="+sid+"&RID=2&AID=0", maps(i, fmt.Sprintf(`"%d-%d"`, c, i))) })
			}
			var got []string
			for len(got) < 21 {
				chunk, err := wctest.ReadChunk(bc)
				if err != nil {
					t.Error(err)
					return
				}
				var arrays [][2]json.RawMessage
				if err := json.Unmarshal([]byte(chunk), &arrays); err != nil {
					t.Errorf("chunk %q: %v", chunk, err)
					return
				}
				for _, a := range arrays {
					got = append(got, string(a[1]))
				}
			}
			posts.Wait()
			for i, m := range got {
				if want := fmt.Sprintf(`["%d-%d"]`, c, i); m != want {
					t.Errorf("session %d: message %d = %s, want %s", c, i, m, want)
				}
			}
		})
	}
	wg.Wait()
}

// packageGoroutines waits until no goroutine runs this package's session or
// handler code and returns the stacks of those that still do.
func packageGoroutines() []string {
	var left []string
	for range 100 {
		buf := make([]byte, 1<<20)
		left = left[:0]
		for g := range strings.SplitSeq(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "webchannel.(*session)") || strings.Contains(g, "webchannel.(*Handler)") {
				left = append(left, g)
			}
		}
		if len(left) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return left
}

// TestHandler_ExpirySparesLiveBackChannels: tabs that went away after a long
// poll expire; one holding a back channel does not, until Close; then no
// goroutine of the package is left.
func TestHandler_ExpirySparesLiveBackChannels(t *testing.T) {
	f := newFixture(t, webchannel.Options{Expiry: 150 * time.Millisecond, LongPoll: 20 * time.Millisecond})
	const gone = 20
	for range gone {
		sid := f.open(t, maps(0, `"a"`))
		bc, _ := f.backChannel(t, sid, 0, 1, "")
		_, _ = wctest.ReadChunk(bc)
	}
	live := f.open(t, maps(0, `"a"`))
	bc, _ := f.backChannel(t, live, 0, 0, "")
	_, _ = wctest.ReadChunk(bc)
	loupetest.Eventually(t, "the abandoned sessions to expire", func() bool { return f.handler.Sessions() == 1 })
	for i := range gone {
		if _, closed := f.stream(i).state(); !closed {
			t.Errorf("expired session %d: stream not closed", i)
		}
	}
	if _, closed := f.stream(gone).state(); closed {
		t.Error("the session with a back channel expired")
	}
	f.handler.Close()
	for {
		if _, err := wctest.ReadChunk(bc); err != nil {
			break // noop keep-alives may come first
		}
	}
	if left := packageGoroutines(); len(left) > 0 {
		t.Errorf("%d goroutines left in the package:\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

func TestHandler_CloseRefusesNewSessions(t *testing.T) {
	f := newFixture(t, webchannel.Options{})
	f.handler.Close()
	if code, _ := f.post(t, "RID=1&CVER=22", maps(0, `"a"`)); code != http.StatusServiceUnavailable {
		t.Errorf("handshake after Close = %d, want 503", code)
	}
	if _, closed := f.stream(0).state(); !closed || f.handler.Sessions() != 0 {
		t.Error("a session opened after Close was kept")
	}
}
