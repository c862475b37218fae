package storage_test

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// files lists the files under the data dir's storage folder ("tmp/…",
// "objects/…", "uploads/…"), to assert that nothing stray or partial stays.
func files(t *testing.T, inst *loupetest.Instance) []string {
	t.Helper()
	root := filepath.Join(inst.DataDir, "storage")
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// storeFile is where the store keeps an object's files (without the
// suffix): objects/{sha256 of the bucket}/{sha256 of the name}; with name
// "", the bucket's folder (with a slash).
func storeFile(bucket, name string) string {
	b, n := sha256.Sum256([]byte(bucket)), sha256.Sum256([]byte(name))
	if name == "" {
		return "objects/" + hex.EncodeToString(b[:]) + "/"
	}
	return "objects/" + hex.EncodeToString(b[:]) + "/" + hex.EncodeToString(n[:])
}

// truncated sends a request whose body stops short of its Content-Length,
// then hangs up, as a client whose connection drops mid-upload.
func truncated(t *testing.T, inst *loupetest.Instance, method, target string, header map[string]string, sent []byte, length int) {
	t.Helper()
	conn, err := net.Dial("tcp", inst.Host)
	if err != nil {
		t.Fatal(err)
	}
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", method, target, inst.Host, length)
	for k, v := range header {
		fmt.Fprintf(&head, "%s: %s\r\n", k, v)
	}
	head.WriteString("\r\n")
	_, _ = conn.Write([]byte(head.String()))
	_, _ = conn.Write(sent)
	time.Sleep(100 * time.Millisecond) // let the server take the bytes before the hang-up
	conn.Close()
}

func TestService_BadInput(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{Config: loupetest.Rules(t, "", loupetest.RepoFile("storage.rules"))})
	const sam = "sam"
	bigAvatar := bytes.Repeat([]byte{0x89}, 5*1024*1024+1) // 1 byte over storage.rules' 5 MB avatar limit
	resp, body := firebase(t, inst, "POST", "?name=avatars%2Fsam%2Fok.png", strings.NewReader("PNG"),
		map[string]string{"Content-Type": "image/png", "Authorization": "Bearer " + loupetest.MockToken(sam)})
	if resp.StatusCode != 200 {
		t.Fatalf("a good upload: %d %s", resp.StatusCode, body)
	}

	for _, tc := range []struct {
		name, method, path string
		header             map[string]string
		body               []byte
		wantCode           int
		wantMessage        string
	}{
		{"a .. segment", "POST", "?name=avatars%2Fsam%2F..%2F..%2Fescape.png", nil, []byte("x"), 400, "Invalid object name."},
		{"a . segment", "POST", "?name=avatars%2F.%2Fx.png", nil, []byte("x"), 400, "Invalid object name."},
		{"a control character", "POST", "?name=avatars%2Fsam%2Fa%01b.png", nil, []byte("x"), 400, "Invalid object name."},
		{"a DEL character", "POST", "?name=avatars%2Fsam%2Fa%7Fb.png", nil, []byte("x"), 400, "Invalid object name."},
		{"invalid UTF-8", "POST", "?name=avatars%2Fsam%2F%FF.png", nil, []byte("x"), 400, "Invalid object name."},
		{"a name over 1024 bytes", "POST", "?name=" + strings.Repeat("n", 1025), nil, []byte("x"), 400, "Invalid object name."},
		{"no name", "POST", "", nil, []byte("x"), 400, "Invalid object name."},
		{"a malformed ID token", "POST", "?name=avatars%2Fsam%2Fa.png", map[string]string{"Authorization": "Bearer not.a-jwt"}, []byte("x"), 401, "Invalid authorization token."},
		{"an unknown auth scheme", "GET", "/avatars%2Fsam%2Fok.png", map[string]string{"Authorization": "Basic c2FtOnB3"}, nil, 401, "Invalid authorization token."},
		{"a wrong download token", "GET", "/avatars%2Fsam%2Fok.png?alt=media&token=00000000-0000-0000-0000-000000000000", nil, nil, 403, "Permission denied. Invalid download token."},
		{"someone else's folder", "POST", "?name=avatars%2Fsam%2Fx.png", map[string]string{"Authorization": "Bearer " + loupetest.MockToken("eve")}, []byte("x"), 403, "Permission denied. No WRITE permission."},
		{"nobody", "POST", "?name=avatars%2Fsam%2Fx.png", map[string]string{"Authorization": ""}, []byte("x"), 403, "Permission denied. No WRITE permission."},
		{"over the size limit", "POST", "?name=avatars%2Fsam%2Fbig.png", nil, bigAvatar, 403, "Permission denied. No WRITE permission."},
		{"an unknown upload session", "POST", "?name=avatars%2Fsam%2Fx.png&upload_id=11111111-2222-3333-4444-555555555555", map[string]string{"X-Goog-Upload-Command": "query"}, nil, 404, "Upload not found."},
		{"a session id that is a path", "POST", "?name=x&upload_id=..%2F..%2Fbuckets", map[string]string{"X-Goog-Upload-Command": "query"}, nil, 404, "Upload not found."},
		{"a prefix without a slash", "GET", "?prefix=avatars", nil, nil, 400, "The prefix parameter must be empty or end with '/'."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			header := map[string]string{"Content-Type": "image/png", "Authorization": "Bearer " + loupetest.MockToken(sam)}
			for k, v := range tc.header {
				header[k] = v
			}
			if header["Authorization"] == "" {
				delete(header, "Authorization")
			}
			var body io.Reader
			if tc.body != nil {
				body = bytes.NewReader(tc.body)
			}
			resp, data := firebase(t, inst, tc.method, tc.path, body, header)
			var e struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			_ = json.Unmarshal(data, &e)
			if resp.StatusCode != tc.wantCode || e.Error.Code != tc.wantCode || e.Error.Message != tc.wantMessage {
				t.Errorf("%d %s; want %d %q", resp.StatusCode, data, tc.wantCode, tc.wantMessage)
			}
		})
	}

	t.Run("over the size limit with no length announced", func(t *testing.T) {
		// A chunked body: the limit can only be judged once the bytes are in.
		req, _ := http.NewRequest("POST", inst.URL+"/v0/b/"+bucket+"/o?name=avatars%2Fsam%2Fchunked.png", io.MultiReader(bytes.NewReader(bigAvatar)))
		req.Header.Set("Content-Type", "image/png")
		req.Header.Set("Authorization", "Bearer "+loupetest.MockToken(sam))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 || req.ContentLength != 0 {
			t.Errorf("chunked upload over the limit: %d (sent length %d)", resp.StatusCode, req.ContentLength)
		}
	})

	t.Run("resumable over the size limit", func(t *testing.T) {
		start := func(announced string) string {
			h := map[string]string{"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
				"Content-Type": "application/json", "Authorization": "Bearer " + loupetest.MockToken(sam), "X-Goog-Upload-Header-Content-Type": "image/png"}
			if announced != "" {
				h["X-Goog-Upload-Header-Content-Length"] = announced
			}
			resp, data := firebase(t, inst, "POST", "?name=avatars%2Fsam%2Fres.png", strings.NewReader(`{"name":"avatars/sam/res.png","contentType":"image/png"}`), h)
			if resp.StatusCode != 200 {
				t.Fatalf("start announcing %q: %d %s", announced, resp.StatusCode, data)
			}
			return resp.Header.Get("X-Goog-Upload-URL")
		}
		// Rules judge the upload at finalize, with what arrived: announcing
		// too much starts a session, and its finalize is refused for good.
		tooMuch := start(fmt.Sprint(len(bigAvatar)))
		if code, data := command(t, tooMuch, "upload, finalize", 0, bigAvatar); code != 403 || !strings.Contains(string(data), "Permission denied. No WRITE permission.") {
			t.Errorf("finalize of a session announcing too much: %d %s", code, data)
		}
		if code, _ := command(t, tooMuch, "finalize", 0, nil); code != 403 {
			t.Errorf("a second finalize of a refused upload: %d, want 403", code)
		}
		// Announcing 100 bytes and sending more: the size does not match.
		code, data := command(t, start("100"), "upload, finalize", 0, bigAvatar)
		if code != 400 || !strings.Contains(string(data), "Upload is 5242881 bytes, not the 100 announced.") {
			t.Errorf("finalize with more than announced: %d %s", code, data)
		}
		// Announcing nothing: the rules judge the size received.
		code, data = command(t, start(""), "upload, finalize", 0, bigAvatar)
		if code != 403 || !strings.Contains(string(data), "Permission denied. No WRITE permission.") {
			t.Errorf("finalize over the limit: %d %s", code, data)
		}
		// Announcing 10 and finalizing with 3: too short.
		u := start("10")
		if code, _ := command(t, u, "upload", 0, []byte("abc")); code != 200 {
			t.Fatalf("chunk: %d", code)
		}
		if code, data := command(t, u, "finalize", 0, nil); code != 400 || !strings.Contains(string(data), "Upload is 3 bytes, not the 10 announced.") {
			t.Errorf("finalize short: %d %s", code, data)
		}
		if code, _ := command(t, u, "cancel", 0, nil); code != 200 {
			t.Errorf("cancel: %d", code)
		}
		if code, _ := command(t, u, "query", 0, nil); code != 200 {
			t.Errorf("query after cancel: %d, want 200", code)
		}
	})

	t.Run("a connection dropped mid-upload", func(t *testing.T) {
		truncated(t, inst, "POST", "/v0/b/"+bucket+"/o?name=avatars%2Fsam%2Fcut.png",
			map[string]string{"Content-Type": "image/png", "Authorization": "Bearer " + loupetest.MockToken(sam)}, []byte("only part"), 4096)
	})

	t.Run("GCS API names", func(t *testing.T) {
		for _, name := range []string{"a%2F..%2Fb", "x%00y", "%2E%2E"} {
			resp, err := http.Post(inst.URL+"/upload/storage/v1/b/"+bucket+"/o?uploadType=media&name="+name, "text/plain", strings.NewReader("x"))
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 400 || !strings.Contains(string(data), `"reason":"invalid"`) {
				t.Errorf("GCS upload of %s: %d %s", name, resp.StatusCode, data)
			}
		}
	})

	// Only the good object (its content named by generation, and its
	// metadata), the session that finalize left short (still resumable), and
	// the state of the sessions refused or cancelled (no content) are on
	// disk: nothing refused, interrupted or cancelled left content.
	var sessions []string
	loupetest.Eventually(t, "no temporary files", func() bool {
		sessions = nil
		for _, f := range files(t, inst) {
			if strings.HasPrefix(f, "uploads/") {
				sessions = append(sessions, f)
			} else if good := storeFile(bucket, "avatars/sam/ok.png"); !strings.HasPrefix(f, good+"#") && f != good+".meta" && f != storeFile(bucket, "")+"bucket.json" {
				return false
			}
		}
		return true
	})
	var content []string
	for _, f := range sessions {
		if !strings.HasSuffix(f, ".json") {
			content = append(content, f)
		}
	}
	if len(content) != 1 || len(sessions) != 5 { // content: the one announcing 100 bytes; state: it and 4 that ended
		t.Errorf("upload sessions on disk: %v", sessions)
	}
}

// command sends one command of a Firebase resumable upload.
func command(t *testing.T, uploadURL, cmd string, offset int, data []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", uploadURL, bytes.NewReader(data))
	req.Header.Set("X-Goog-Upload-Command", cmd)
	req.Header.Set("X-Goog-Upload-Offset", fmt.Sprint(offset))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// received asks a Firebase resumable upload how many bytes it holds.
func received(t *testing.T, uploadURL string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", uploadURL, nil)
	req.Header.Set("X-Goog-Upload-Command", "query")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("X-Goog-Upload-Size-Received")
}

func TestService_ResumableSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	inst := loupetest.Start(t, loupetest.Options{Process: true, DataDir: dir})
	content := bytes.Repeat([]byte("loupe resumes "), 20000) // 280 000 bytes
	resp, _ := firebase(t, inst, "POST", "?name=videos%2Fsam%2Flong.mp4", strings.NewReader(`{"name":"videos/sam/long.mp4","contentType":"video/mp4"}`),
		map[string]string{"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start", "Content-Type": "application/json",
			"X-Goog-Upload-Header-Content-Length": fmt.Sprint(len(content))})
	uploadURL := resp.Header.Get("X-Goog-Upload-URL")
	if code, _ := command(t, uploadURL, "upload", 0, content[:100000]); code != 200 {
		t.Fatalf("first chunk: %d", code)
	}
	// The second chunk's connection drops after 50 000 of its 100 000 bytes.
	target := uploadURL[strings.Index(uploadURL, "/v0/"):]
	truncated(t, inst, "POST", target, map[string]string{"X-Goog-Upload-Command": "upload", "X-Goog-Upload-Offset": "100000"}, content[100000:150000], 100000)
	loupetest.Eventually(t, "the partial chunk", func() bool { return received(t, uploadURL) == "150000" })

	// GCS: a session with its first 256 KiB chunk.
	gcsChunk := func(host, location, contentRange string, data []byte) *http.Response {
		req, _ := http.NewRequest("PUT", "http://"+host+location[strings.Index(location, "/upload/"):], bytes.NewReader(data))
		req.Header.Set("Content-Range", contentRange)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp, err := http.Post(inst.URL+"/upload/storage/v1/b/"+bucket+"/o?uploadType=resumable&name=gcs.bin", "application/json", strings.NewReader(`{"contentType":"application/octet-stream"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	location := resp.Header.Get("Location")
	if r := gcsChunk(inst.Host, location, "bytes 0-262143/*", content[:262144]); r.StatusCode != http.StatusPermanentRedirect {
		t.Fatalf("GCS chunk: %d", r.StatusCode)
	}

	inst.Kill()
	inst = loupetest.Start(t, loupetest.Options{DataDir: dir})
	uploadURL = inst.URL + target

	if got := received(t, uploadURL); got != "150000" {
		t.Fatalf("after a restart the session holds %s bytes, want 150000", got)
	}
	code, data := command(t, uploadURL, "upload, finalize", 150000, content[150000:])
	var meta map[string]any
	_ = json.Unmarshal(data, &meta)
	sum := md5.Sum(content)
	if code != 200 || meta["size"] != fmt.Sprint(len(content)) || meta["md5Hash"] != base64.StdEncoding.EncodeToString(sum[:]) {
		t.Fatalf("finalize after a restart: %d %s", code, data)
	}
	// A finalized session answers its object again.
	if code, data := command(t, uploadURL, "query", 0, nil); code != 200 || !strings.Contains(string(data), `"name":"videos/sam/long.mp4"`) {
		t.Errorf("query after finalize: %d %s", code, data)
	}

	if r := gcsChunk(inst.Host, location, "bytes */*", nil); r.StatusCode != http.StatusPermanentRedirect || r.Header.Get("Range") != "bytes=0-262143" {
		t.Fatalf("GCS status after a restart: %d %q", r.StatusCode, r.Header.Get("Range"))
	}
	if r := gcsChunk(inst.Host, location, fmt.Sprintf("bytes 262144-%d/%d", len(content)-1, len(content)), content[262144:]); r.StatusCode != 200 {
		t.Fatalf("GCS last chunk: %d", r.StatusCode)
	}
	resp, err = http.Get(inst.URL + "/" + bucket + "/gcs.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, content) {
		t.Errorf("GCS object after a restart: %d bytes", len(got))
	}
	for _, f := range files(t, inst) {
		if strings.HasPrefix(f, "tmp/") {
			t.Errorf("stray file %s", f)
		}
	}
}
