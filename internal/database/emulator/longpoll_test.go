package emulator_test

import (
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// lpGet is a long-polling request: the status and the script answered.
func lpGet(t *testing.T, ctx context.Context, u string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == 200 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/javascript") {
		t.Errorf("a long-polling answer is %s, want a script", resp.Header.Get("Content-Type"))
	}
	return resp.StatusCode, string(b)
}

// segments is how the JS SDK sends a message over long polling: web-safe
// base64 with "." for "=", cut in numbered segments from first, each with
// the message's segment count.
func segments(first int, msg string, size int) url.Values {
	enc := strings.ReplaceAll(base64.URLEncoding.EncodeToString([]byte(msg)), "=", ".")
	var parts []string
	for len(enc) > size {
		parts, enc = append(parts, enc[:size]), enc[size:]
	}
	parts = append(parts, enc)
	q := url.Values{}
	for i, p := range parts {
		n := strconv.Itoa(i)
		q.Set("seg"+n, strconv.Itoa(first+i))
		q.Set("ts"+n, strconv.Itoa(len(parts)))
		q.Set("d"+n, p)
	}
	return q
}

// TestLongPolling_Session: the long-polling transport as the JS SDK uses it
// when WebSockets fail: the start script carries the session's id and
// password and the hello as packet 0; a poll carrying a write split over
// two segments is answered with the write's ok as packet 1, and the write
// is stored; a wrong password finds no session; dropping the disconnect
// frame ends the session, which runs its onDisconnect write.
func TestLongPolling_Session(t *testing.T) {
	inst := serve(t)
	ctx := context.Background()
	base := inst.URL + "/.lp?v=5&ns=lpdemo"
	code, start := lpGet(t, ctx, base+"&start=t&ser=1&cb=7")
	m := regexp.MustCompile(`^parent\.pLPCommand7\("start","([0-9a-f]+)","([0-9a-f]+)"\);parent\.pRTLPCB7\(0,\[(.*)\]\);$`).FindStringSubmatch(start)
	if code != 200 || m == nil || !strings.Contains(m[3], `"t":"h"`) {
		t.Fatalf("start: %d %s, want the start command and the hello as packet 0", code, start)
	}
	id, pw := m[1], m[2]
	session := base + "&id=" + id + "&pw=" + pw

	q := segments(0, `{"t":"d","d":{"r":1,"a":"p","b":{"p":"/lp/x","d":"v"}}}`, 40)
	if q.Get("ts0") != "2" {
		t.Fatalf("the write should take two segments: %v", q)
	}
	code, got := lpGet(t, ctx, session+"&ser=2&"+q.Encode())
	if code != 200 || !strings.HasPrefix(got, "parent.pRTLPCB7(1,[") || !strings.Contains(got, `"r":1,"b":{"s":"ok"`) {
		t.Fatalf("poll with the write: %d %s, want packet 1 with its ok", code, got)
	}
	if v := rawGet(t, inst.URL+"/lp/x.json?ns=lpdemo"); v != `"v"` {
		t.Errorf("after the write lp/x = %s", v)
	}
	if code, _ := lpGet(t, ctx, base+"&id="+id+"&pw=wrong&ser=3"); code != http.StatusNotFound {
		t.Errorf("a wrong password: %d, want 404", code)
	}

	q = segments(2, `{"t":"d","d":{"r":2,"a":"o","b":{"p":"/lp/gone","d":"bye"}}}`, 1000)
	if code, got := lpGet(t, ctx, session+"&ser=4&"+q.Encode()); code != 200 || !strings.Contains(got, `"r":2,"b":{"s":"ok"`) {
		t.Fatalf("onDisconnect over long polling: %d %s", code, got)
	}
	if v := rawGet(t, inst.URL+"/lp/gone.json?ns=lpdemo"); v != "null" {
		t.Errorf("before the frame dropped lp/gone = %s, want null", v)
	}
	// The disconnect frame is held open until the page goes away: the
	// request is sent whole, then its connection is dropped.
	conn, err := net.Dial("tcp", inst.Host)
	if err != nil {
		t.Fatal(err)
	}
	path := strings.TrimPrefix(session, inst.URL) + "&dframe=t"
	if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: "+inst.Host+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	loupetest.Eventually(t, "the onDisconnect write", func() bool {
		return rawGet(t, inst.URL+"/lp/gone.json?ns=lpdemo") == `"bye"`
	})
	loupetest.Eventually(t, "the session forgotten", func() bool {
		code, _ := lpGet(t, ctx, session+"&ser=5")
		return code == http.StatusNotFound
	})
}
