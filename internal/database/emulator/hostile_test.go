package emulator_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// setRules installs a namespace's rules as the owner.
func setRules(t *testing.T, inst *loupetest.Instance, ns, rules string) {
	t.Helper()
	if code, out := loupetest.Call(t, "PUT", inst.URL+"/.settings/rules.json?ns="+ns, rules, "Authorization", "Bearer owner"); code != http.StatusOK {
		t.Fatalf("setting rules: %d %v", code, out)
	}
}

// TestREST_ADeniedWriteIsRefusedBeforeItsBody: a write the rules deny
// whatever its data (an anonymous caller where only signed-in users may
// write) is answered 401 while its body is still arriving, so a huge or
// wide body from such a caller costs loupe neither memory nor time under
// the write lock. The body here never ends until the answer has come.
func TestREST_ADeniedWriteIsRefusedBeforeItsBody(t *testing.T) {
	inst := serve(t)
	setRules(t, inst, "deny", `{"rules": {".read": true, "users": {"$uid": {".write": "auth != null && auth.uid == $uid"}},
		"admin": {".write": "auth.token.admin === true"}, "open": {".write": "newData.exists()"}}}`)
	// (An update where rules below could grant some of its keys is judged
	// once its keys are read.)
	for _, tc := range []struct{ method, path string }{
		{"PUT", "/users/alice.json"},
		{"PATCH", "/users/alice.json"},
		{"POST", "/users.json"},
		{"PATCH", "/admin.json"},
		{"PUT", "/.json"},
	} {
		conn, err := net.Dial("tcp", inst.Host)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(connDeadline(t))
		// The start of a wide body; the rest never comes.
		start := `{"a":1,"b":2,"c":3,`
		fmt.Fprintf(conn, "%s %s?ns=deny HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", tc.method, tc.path, inst.Host, len(start), start)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s %s: no answer while the body was unfinished: %v", tc.method, tc.path, err)
		}
		out, _ := io.ReadAll(resp.Body)
		conn.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(out), `"Permission denied"`) {
			t.Errorf("%s %s: %d %s, want 401 Permission denied", tc.method, tc.path, resp.StatusCode, out)
		}
	}
	// What the rules could allow is still judged with its data.
	user := "Bearer " + loupetest.MockToken("alice")
	if code, out := loupetest.Call(t, "PUT", inst.URL+"/users/alice.json?ns=deny", `{"name":"A"}`, "Authorization", user); code != http.StatusOK {
		t.Errorf("alice's own write: %d %v", code, out)
	}
	if code, out := loupetest.Call(t, "PUT", inst.URL+"/open/x.json?ns=deny", `null`); code != http.StatusUnauthorized {
		t.Errorf("a write the data's rule refuses: %d %v, want 401", code, out)
	}
	if code, out := loupetest.Call(t, "PUT", inst.URL+"/open/x.json?ns=deny", `1`); code != http.StatusOK {
		t.Errorf("a write the data's rule allows: %d %v", code, out)
	}
}

// TestREST_WidePatch: an update of many locations is applied, and one
// whose paths overlap (however far apart they sort as keys) is refused.
func TestREST_WidePatch(t *testing.T) {
	inst := serve(t)
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 20000 {
		fmt.Fprintf(&b, `"k%05d/v":%d,`, i, i)
	}
	wide := b.String()
	if code, out := loupetest.Call(t, "PATCH", inst.URL+"/w.json?ns=wide", wide+`"x":0}`); code != http.StatusOK {
		t.Fatalf("wide patch: %d", code)
	} else if len(out) != 20001 {
		t.Fatalf("wide patch answered %d locations, want 20001", len(out))
	}
	if got := rawGet(t, inst.URL+"/w/k19999/v.json?ns=wide"); got != "19999" {
		t.Errorf("after the wide patch: %s", got)
	}
	for _, overlap := range []string{`"k00007":{"v":1}}`, `"k00007/v/deeper":1}`, `"/k00007//v":2}`} {
		code, out := loupetest.Call(t, "PATCH", inst.URL+"/w.json?ns=wide", wide+overlap)
		if msg, _ := out["error"].(string); code != http.StatusBadRequest || !strings.Contains(msg, "overlap") {
			t.Errorf("overlapping %s: %d %v, want 400 overlap", overlap, code, out)
		}
	}
}

// TestREST_DataAsProductionStoresIt: the depth limit counts the path the
// data is written under with the data (32 keys from the root to a leaf),
// refused when written rather than stored and then unreadable; text that
// is not UTF-8 is refused, not stored as U+FFFD; -0 is stored as 0.
func TestREST_DataAsProductionStoresIt(t *testing.T) {
	inst := serve(t)
	nest := func(levels int, leaf string) string {
		return strings.Repeat(`{"n":`, levels) + leaf + strings.Repeat(`}`, levels)
	}
	deep := strings.Repeat("/d", 20)
	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"PUT", deep + ".json", nest(20, "1"), 400},
		{"PATCH", strings.Repeat("/d", 10) + ".json", `{"` + strings.Repeat("e/", 15) + `e":` + nest(10, "1") + `}`, 400},
		{"PUT", deep + ".json", nest(12, "1"), 200},
		{"PUT", "/s.json", "\"caf\xe9\"", 400},
		{"PUT", "/s.json", "{\"k\":\"\xff\xfe\"}", 400},
		{"PUT", "/z.json", `-0`, 200},
		{"PUT", "/zz.json", `{"a":-0.0,"b":[-0]}`, 200},
	} {
		code, out := loupetest.Call(t, tc.method, inst.URL+tc.path+"?ns=data", tc.body)
		if code != tc.status {
			t.Errorf("%s %s %q: %d %v, want %d", tc.method, tc.path, tc.body, code, out, tc.status)
		}
	}
	if got := rawGet(t, inst.URL+"/.json?ns=data&format=export"); strings.Contains(got, "\ufffd") || strings.Contains(got, "-0") || !strings.Contains(got, `"z":0`) {
		t.Errorf("stored: %s", got)
	}
	if got := rawGet(t, inst.URL+"/d.json?ns=data&shallow=true"); got != `{"d":true}` {
		t.Errorf("the 32-level write: %s", got)
	}
}

// TestWebSocket_AWriteOver16MBIsRefused: production takes writes of up to
// 16 MB from the SDKs (which split a message into frames of 16 KiB after a
// frame count) and answers a larger one write_too_big; the session goes
// on, and nothing is written.
func TestWebSocket_AWriteOver16MBIsRefused(t *testing.T) {
	inst := serve(t)
	c := dialWS(t, inst, "/.ws?v=5&ns=big")
	c.read() // hello
	var data strings.Builder
	for i := range 17 {
		fmt.Fprintf(&data, `"k%d":"%s",`, i, strings.Repeat("x", 1<<20))
	}
	msg := `{"t":"d","d":{"r":1,"a":"p","b":{"p":"/big","d":{` + strings.TrimSuffix(data.String(), ",") + `}}}}`
	const frame = 16 << 10
	frames := []string{strconv.Itoa((len(msg) + frame - 1) / frame)}
	for i := 0; i < len(msg); i += frame {
		frames = append(frames, msg[i:min(i+frame, len(msg))])
	}
	c.sendAll(frames...)
	if status, data, _ := c.answer(1); status != "write_too_big" || !strings.Contains(data, "exceeds the maximum size") {
		t.Errorf("a 17 MiB write answered %s %s, want write_too_big", status, data)
	}
	c.send(`{"t":"d","d":{"r":2,"a":"p","b":{"p":"/small","d":1}}}`)
	if status, _, _ := c.answer(2); status != "ok" {
		t.Errorf("the next write answered %s", status)
	}
	if got := rawGet(t, inst.URL+"/.json?ns=big&shallow=true"); got != `{"small":1}` {
		t.Errorf("stored: %s", got)
	}
}

// TestWebSocket_AClientThatNeverReadsIsDropped: a listener that reads
// nothing while 1 MiB values are written is disconnected once it falls
// too far behind (production drops such clients; their SDK reconnects),
// instead of loupe holding every update for it; a client that reads gets
// every update.
func TestWebSocket_AClientThatNeverReadsIsDropped(t *testing.T) {
	inst := serve(t)
	const writes = 48
	listen := `{"t":"d","d":{"r":1,"a":"q","b":{"p":"/big","h":""}}}`
	slow := dialWS(t, inst, "/.ws?v=5&ns=slow")
	slow.send(listen)
	reader := dialWS(t, inst, "/.ws?v=5&ns=slow")
	reader.read() // hello
	reader.send(listen)
	if status, _, _ := reader.answer(1); status != "ok" {
		t.Fatalf("listen: %s", status)
	}
	// The reader counts each push of /big; the writer waits for it before
	// the next write, so the reader is never behind, however slow the
	// machine, while the client that never reads falls further behind at
	// every write.
	pushed := make(chan struct{})
	go func() {
		defer close(pushed)
		for {
			op, p, err := readFrame(reader.rd)
			if err != nil {
				return
			}
			if op == 0x1 && strings.Contains(string(p[:min(len(p), 64)]), `"a":"d","b":{"p":"big","d":"v`) {
				pushed <- struct{}{}
			}
		}
	}()
	value := `"` + strings.Repeat("v", 1<<20) + `"`
	for i := range writes {
		if code, out := loupetest.Call(t, "PUT", inst.URL+"/big.json?ns=slow", value, "Authorization", "Bearer owner"); code != http.StatusOK {
			t.Fatalf("write: %d %v", code, out)
		}
		if _, ok := <-pushed; !ok {
			t.Fatalf("the client that reads was disconnected after %d of %d updates", i, writes)
		}
	}
	n, err := io.Copy(io.Discard, slow.rd)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the client that never read was not disconnected (it then read %d MiB)", n>>20)
	}
	if n >= writes<<20 {
		t.Errorf("the client that never read got all %d MiB of updates", n>>20)
	}
}

// readFrame reads one server frame: its opcode and payload.
func readFrame(rd io.Reader) (byte, []byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(rd, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(rd, b[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(rd, b[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	p := make([]byte, n)
	_, err := io.ReadFull(rd, p)
	return h[0] & 0x0f, p, err
}
