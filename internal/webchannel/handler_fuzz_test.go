package webchannel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/webchannel"
	"github.com/loupe-dev/loupe/internal/webchannel/wctest"
)

// serve runs one request through h in process, giving it at most 20 ms, so
// that a streaming back channel ends. It returns nil for a request no
// client could send (a malformed method or URL).
func serve(h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	r, err := http.NewRequestWithContext(ctx, method, target, strings.NewReader(body))
	if err != nil || strings.ContainsAny(target, " \r\n") {
		return nil
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func echoHandler(opts webchannel.Options) *webchannel.Handler {
	return webchannel.NewHandler(func(_ http.Header, _ url.Values, send func([]byte)) (webchannel.Stream, error) {
		return &echo{send: send}, nil
	}, opts)
}

// handshake opens a session in process and returns its id.
func handshake(t *testing.T, h http.Handler, form url.Values) string {
	w := serve(h, http.MethodPost, "/channel?VER=8&RID=1&CVER=22", form.Encode())
	if w.Code != http.StatusOK {
		t.Fatalf("handshake = %d %q", w.Code, w.Body)
	}
	return strings.Split(w.Body.String(), `"`)[3]
}

// FuzzHandler_Request sends arbitrary requests to a handler; "$" in the
// query stands for the id of a session opened just before. Every request
// is answered 200, 400 or 413, a 200 with a body (but for terminate and a
// streaming back channel),
// and never a panic.
func FuzzHandler_Request(f *testing.F) {
	for _, seed := range [][3]string{
		{"POST", "RID=1&CVER=22", "count=1&ofs=0&req0___data__=1"},
		{"POST", "SID=$&RID=2&AID=0", "count=1&ofs=1&req0___data__=%7B%7D"},
		{"POST", "SID=$&RID=2&AID=x", "count=2&ofs=1&req0___data__=1&req1___data__=2"},
		{"POST", "SID=$&RID=2", "count=1&ofs=1001&req0___data__=1"},
		{"POST", "SID=$&RID=2", "count=-1&ofs=1"},
		{"GET", "SID=$&RID=rpc&AID=0&CI=1&TO=1", ""},
		{"GET", "SID=$&RID=rpc&AID=99&CI=0", ""},
		{"GET", "SID=nope&RID=rpc&AID=0&CI=0", ""},
		{"POST", "SID=$&TYPE=terminate", ""},
		{"PUT", "SID=$", "count=0"},
		{"GET", "RID=1", ""},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	h := echoHandler(webchannel.Options{Expiry: 100 * time.Millisecond, LongPoll: time.Millisecond, MaxBody: 4096})
	defer h.Close()
	f.Fuzz(func(t *testing.T, method, query, body string) {
		sid := handshake(t, h, maps(0, `"first"`))
		query = strings.ReplaceAll(query, "$", sid)
		q, _ := url.ParseQuery(query)
		// A streaming back channel may rightly say nothing before the client leaves.
		quiet := q.Get("TYPE") == "terminate" || (method == http.MethodGet && q.Get("CI") != "1")
		w := serve(h, method, "/channel?VER=8&"+query, body)
		switch {
		case w == nil:
			return
		case w.Code != http.StatusOK && w.Code != http.StatusBadRequest && w.Code != http.StatusRequestEntityTooLarge:
			t.Errorf("%s %q %q = %d", method, query, body, w.Code)
		case w.Code == http.StatusOK && w.Body.Len() == 0 && !quiet:
			t.Errorf("%s %q %q = 200 without a body", method, query, body)
		}
	})
}

// FuzzHandler_BackChannelChunk sends arbitrary text through a session and
// reads it back from a long poll: the chunk length, counted in UTF-16 code
// units, frames exactly the array that carries it.
func FuzzHandler_BackChannelChunk(f *testing.F) {
	for _, seed := range []string{"", "Zürich 😀", "東京\n", "\u2028\u2029", "\xff\xfe", `"]]]`, "𝄞𝄞𝄞"} {
		f.Add(seed)
	}
	h := echoHandler(webchannel.Options{Expiry: 100 * time.Millisecond})
	defer h.Close()
	f.Fuzz(func(t *testing.T, text string) {
		msg, err := json.Marshal(text)
		if err != nil {
			t.Fatal(err)
		}
		sid := handshake(t, h, maps(0, string(msg)))
		w := serve(h, http.MethodGet, "/channel?VER=8&RID=rpc&AID=0&CI=1&SID="+sid, "")
		r := bufio.NewReader(w.Body)
		got, err := wctest.ReadChunk(r)
		if want := "[[1,[" + string(msg) + "]]]"; err != nil || got != want {
			t.Fatalf("chunk %q (%v), want %q", got, err, want)
		}
		if rest, _ := r.ReadString(0); rest != "" {
			t.Fatalf("%q after the chunk", rest)
		}
	})
}
