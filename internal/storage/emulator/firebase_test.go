package emulator_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest/inproc"
)

// firebaseClient calls the Firebase Storage REST API (/v0) of an in-process
// loupe as the JS SDK does.
type firebaseClient struct {
	t      *testing.T
	base   string // the server's URL and /v0/b/{bucket}/o
	bearer string // the Authorization token, "" for none
}

// do sends a request and returns its status, headers and body.
func (c firebaseClient) do(method, path string, header map[string]string, body string) (int, http.Header, string) {
	c.t.Helper()
	target := path
	if !strings.HasPrefix(path, "http") {
		target = c.base + path
	}
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// object sends a request that must answer 200 with an object's metadata.
func (c firebaseClient) object(method, path string, header map[string]string, body string) map[string]any {
	c.t.Helper()
	code, _, out := c.do(method, path, header, body)
	if code != http.StatusOK {
		c.t.Fatalf("%s %s = %d %s, want 200", method, path, code, out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		c.t.Fatalf("%s %s: %v in %s", method, path, err, out)
	}
	return m
}

// TestFirebaseAPI uploads as the JS SDK does (media, multipart and
// resumable), reads the metadata and the content (by token too), updates
// the metadata, lists, changes download tokens and deletes, with the
// answers the Firebase API gives, refusals included.
func TestFirebaseAPI(t *testing.T) {
	h := inproc.Start(t, inproc.Options{Only: []string{"storage"}})
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	bucket := h.Project + ".appspot.com"
	owner := firebaseClient{t: t, base: srv.URL + "/v0/b/" + bucket + "/o", bearer: h.AdminToken()}
	nobody := firebaseClient{t: t, base: owner.base}

	media := owner.object("POST", "?name=notes%2Fa.txt", map[string]string{"Content-Type": "text/plain"}, "hello")
	if media["name"] != "notes/a.txt" || media["size"] != "5" || media["contentType"] != "text/plain" || media["contentDisposition"] != "inline" || media["downloadTokens"] == "" {
		t.Errorf("media upload answered %v", media)
	}

	multipart := "--b\r\nContent-Type: application/json\r\n\r\n{\"name\":\"notes/b.json\",\"metadata\":{\"k\":\"v\"}}\r\n" +
		"--b\r\nContent-Type: application/json\r\n\r\n{\"x\":1}\r\n--b--\r\n"
	multi := owner.object("POST", "", map[string]string{"Content-Type": "multipart/related; boundary=b", "X-Goog-Upload-Protocol": "multipart"}, multipart)
	if meta, _ := multi["metadata"].(map[string]any); multi["name"] != "notes/b.json" || multi["size"] != "7" || meta["k"] != "v" {
		t.Errorf("multipart upload answered %v", multi)
	}
	if code, _, _ := owner.do("POST", "?name=notes%2Fbad", map[string]string{"Content-Type": "text/plain", "X-Goog-Upload-Protocol": "multipart"}, "x"); code != http.StatusBadRequest {
		t.Errorf("a multipart upload that is not multipart/related = %d, want 400", code)
	}

	// Resumable: start, a chunk, a query, the last chunk with finalize.
	code, hdr, out := owner.do("POST", "?name=notes%2Fc.bin", map[string]string{"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
		"X-Goog-Upload-Header-Content-Type": "application/octet-stream", "Content-Type": "application/json"}, "{}")
	session := hdr.Get("X-Goog-Upload-URL")
	if code != http.StatusOK || session == "" || hdr.Get("X-Goog-Upload-Status") != "active" {
		t.Fatalf("resumable start = %d %v %s", code, hdr, out)
	}
	if code, _, _ := owner.do("POST", session, map[string]string{"X-Goog-Upload-Command": "upload", "X-Goog-Upload-Offset": "0"}, "abc"); code != http.StatusOK {
		t.Fatalf("first chunk = %d", code)
	}
	if code, _, _ := owner.do("POST", session, map[string]string{"X-Goog-Upload-Command": "upload", "X-Goog-Upload-Offset": "1"}, "zz"); code != http.StatusBadRequest {
		t.Errorf("a chunk at the wrong offset = %d, want 400", code)
	}
	if _, hdr, _ := owner.do("POST", session, map[string]string{"X-Goog-Upload-Command": "query"}, ""); hdr.Get("X-Goog-Upload-Size-Received") != "3" {
		t.Errorf("query after 3 bytes: received %q", hdr.Get("X-Goog-Upload-Size-Received"))
	}
	if code, _, _ := owner.do("POST", session, map[string]string{"X-Goog-Upload-Command": "rewind"}, ""); code != http.StatusBadRequest {
		t.Errorf("an unknown upload command = %d, want 400", code)
	}
	done := owner.object("POST", session, map[string]string{"X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "3"}, "de")
	if done["name"] != "notes/c.bin" || done["size"] != "5" {
		t.Errorf("resumable finalize answered %v", done)
	}
	if code, _, _ := owner.do("POST", "?name=notes%2Fc.bin&upload_id=nope&upload_protocol=resumable", map[string]string{"X-Goog-Upload-Command": "query"}, ""); code != http.StatusNotFound {
		t.Errorf("an unknown upload id = %d, want 404", code)
	}

	got := owner.object("GET", "/notes%2Fa.txt", nil, "")
	token, _ := got["downloadTokens"].(string)
	if got["md5Hash"] == "" || token == "" {
		t.Fatalf("metadata of notes/a.txt = %v", got)
	}
	if code, _, body := nobody.do("GET", "/notes%2Fa.txt?alt=media&token="+url.QueryEscape(token), nil, ""); code != http.StatusOK || body != "hello" {
		t.Errorf("download by token without credentials = %d %q, want 200 hello", code, body)
	}
	if code, _, _ := owner.do("GET", "/notes%2Fmissing", nil, ""); code != http.StatusNotFound {
		t.Errorf("metadata of a missing object = %d, want 404", code)
	}

	updated := owner.object("PATCH", "/notes%2Fa.txt", map[string]string{"Content-Type": "application/json"}, `{"contentType":"text/markdown","metadata":{"x":"1"}}`)
	if meta, _ := updated["metadata"].(map[string]any); updated["contentType"] != "text/markdown" || meta["x"] != "1" || updated["downloadTokens"] != token {
		t.Errorf("metadata update answered %v, want text/markdown, x = 1 and the same download token", updated)
	}
	if code, _, _ := owner.do("PATCH", "/notes%2Fmissing", map[string]string{"Content-Type": "application/json"}, `{"contentType":"text/plain"}`); code != http.StatusNotFound {
		t.Errorf("update of a missing object = %d, want 404", code)
	}

	code, _, out = owner.do("GET", "?prefix=notes%2F&delimiter=%2F", nil, "")
	var list struct {
		Items []struct{ Name string } `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); code != http.StatusOK || err != nil || len(list.Items) != 3 {
		t.Errorf("list of notes/ = %d %s, want the 3 objects", code, out)
	}
	if code, _, _ := owner.do("GET", "?prefix=notes", nil, ""); code != http.StatusBadRequest {
		t.Errorf("a prefix not ending in / = %d, want 400", code)
	}

	if code, _, _ := nobody.do("POST", "/notes%2Fa.txt?create_token=true", nil, ""); code != http.StatusForbidden {
		t.Errorf("a token change without admin credentials = %d, want 403", code)
	}
	if code, _, _ := owner.do("POST", "/notes%2Fa.txt?create_token=yes", nil, ""); code != http.StatusBadRequest {
		t.Errorf("create_token=yes = %d, want 400", code)
	}
	two := owner.object("POST", "/notes%2Fa.txt?create_token=true", nil, "")
	if tokens := strings.Split(two["downloadTokens"].(string), ","); len(tokens) != 2 || tokens[0] != token {
		t.Errorf("after create_token the tokens are %v, want the first and a new one", two["downloadTokens"])
	}
	one := owner.object("POST", "/notes%2Fa.txt?delete_token="+url.QueryEscape(token), nil, "")
	if one["downloadTokens"] == token || strings.Contains(one["downloadTokens"].(string), ",") {
		t.Errorf("after delete_token the tokens are %v, want only the newer one", one["downloadTokens"])
	}
	if code, _, _ := nobody.do("GET", "/notes%2Fa.txt?alt=media&token="+url.QueryEscape(token), nil, ""); code == http.StatusOK {
		t.Errorf("download by a deleted token = %d, want a refusal", code)
	}

	if code, _, _ := owner.do("DELETE", "/notes%2Fa.txt", nil, ""); code != http.StatusNoContent {
		t.Errorf("delete = %d, want 204", code)
	}
	if code, _, _ := owner.do("GET", "/notes%2Fa.txt", nil, ""); code != http.StatusNotFound {
		t.Errorf("metadata after delete = %d, want 404", code)
	}
	if code, _, _ := owner.do("DELETE", "/notes%2Fa.txt", nil, ""); code != http.StatusNotFound {
		t.Errorf("delete of a deleted object = %d, want 404", code)
	}
	if code, _, _ := (firebaseClient{t: t, base: owner.base, bearer: "not-a-token"}).do("GET", "/notes%2Fb.json", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("a bad token = %d, want 401", code)
	}
}
