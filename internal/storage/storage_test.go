package storage_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
)

const bucket = "demo-loupe.appspot.com"

func client(t testing.TB, inst *loupetest.Instance) *storage.Client {
	t.Helper()
	t.Setenv("STORAGE_EMULATOR_HOST", inst.Host)
	c, err := storage.NewClient(context.Background(), option.WithHTTPClient(recordingClient))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func write(t *testing.T, c *storage.Client, name string, data []byte, chunk int) *storage.ObjectAttrs {
	t.Helper()
	w := c.Bucket(bucket).Object(name).NewWriter(context.Background())
	w.ContentType = "video/mp4"
	w.ChunkSize = chunk
	w.Metadata = map[string]string{"owner": "sam"}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Attrs()
}

func TestStorage_GoClient(t *testing.T) {
	ctx := context.Background()
	inst := loupetest.Start(t, loupetest.Options{})
	c := client(t, inst)
	small := []byte("hello, loupe")
	big := bytes.Repeat([]byte("0123456789abcdef"), 80*1024) // 1.25 MiB: 5 resumable chunks of 256 KiB
	write(t, c, "videos/sam/small.mp4", small, 0)
	attrs := write(t, c, "videos/sam/big.mp4", big, 256*1024)
	sum := md5.Sum(big)
	if attrs.Size != int64(len(big)) || !bytes.Equal(attrs.MD5, sum[:]) || attrs.Metadata["owner"] != "sam" {
		t.Errorf("attrs = size %d md5 %x metadata %v", attrs.Size, attrs.MD5, attrs.Metadata)
	}
	got, err := c.Bucket(bucket).Object("videos/sam/big.mp4").Attrs(ctx)
	if err != nil || got.CRC32C == 0 || got.ContentType != "video/mp4" {
		t.Fatalf("Attrs = %+v, %v", got, err)
	}
	r, err := c.Bucket(bucket).Object("videos/sam/big.mp4").NewRangeReader(ctx, 16*1000, 32)
	if err != nil {
		t.Fatal(err)
	}
	part, _ := io.ReadAll(r)
	r.Close()
	if !bytes.Equal(part, big[16000:16032]) {
		t.Errorf("range read = %q", part)
	}
	r, err = c.Bucket(bucket).Object("videos/sam/small.mp4").NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := io.ReadAll(r)
	r.Close()
	if !bytes.Equal(all, small) {
		t.Errorf("read = %q", all)
	}
	if _, err := c.Bucket(bucket).Object("copies/small.mp4").CopierFrom(c.Bucket(bucket).Object("videos/sam/small.mp4")).Run(ctx); err != nil {
		t.Fatal(err)
	}
	var names, prefixes []string
	it := c.Bucket(bucket).Objects(ctx, &storage.Query{Delimiter: "/"})
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if a.Prefix != "" {
			prefixes = append(prefixes, a.Prefix)
		} else {
			names = append(names, a.Name)
		}
	}
	if fmt.Sprint(prefixes) != "[copies/ videos/]" || len(names) != 0 {
		t.Errorf("list with delimiter: names %v prefixes %v", names, prefixes)
	}
	// Names of up to 1,024 bytes of UTF-8, longer than any file system's
	// file names, store and read back.
	long := "videos/sam/" + strings.Repeat("ü", 506) + "x" // 1,024 bytes
	write(t, c, long, small, 0)
	if a, err := c.Bucket(bucket).Object(long).Attrs(ctx); err != nil || a.Name != long || a.Size != int64(len(small)) {
		t.Errorf("a 1,024-byte name: %+v, %v", a, err)
	}
	if err := c.Bucket(bucket).Object("copies/small.mp4").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Bucket(bucket).Object("copies/small.mp4").Attrs(ctx); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Errorf("after delete: %v", err)
	}
}

// firebase calls the Firebase Storage API (/v0) as the JS SDK does.
func firebase(t *testing.T, inst *loupetest.Instance, method, path string, body io.Reader, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	return call(t, method, inst.URL+"/v0/b/"+bucket+"/o"+path, body, header)
}

// call sends one request with the headers given and reads the answer.
func call(t *testing.T, method, url string, body io.Reader, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, data
}

func TestStorage_FirebaseAPI(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{})
	multipart := "--B\r\nContent-Type: application/json; charset=utf-8\r\n\r\n{\"name\":\"avatars/sam/me.png\",\"contentType\":\"image/png\",\"metadata\":{\"k\":\"v\"}}\r\n--B\r\nContent-Type: image/png\r\n\r\nPNGDATA0123456789\r\n--B--"
	resp, body := firebase(t, inst, "POST", "?name=avatars%2Fsam%2Fme.png", strings.NewReader(multipart),
		map[string]string{"X-Goog-Upload-Protocol": "multipart", "Content-Type": "multipart/related; boundary=B"})
	var meta map[string]any
	_ = json.Unmarshal(body, &meta)
	if resp.StatusCode != 200 || meta["size"] != "17" || meta["contentType"] != "image/png" || meta["downloadTokens"] == "" {
		t.Fatalf("multipart upload: %d %s", resp.StatusCode, body)
	}
	token := meta["downloadTokens"].(string)
	resp, body = firebase(t, inst, "GET", "/avatars%2Fsam%2Fme.png?alt=media&token="+token, nil, map[string]string{"Range": "bytes=3-6"})
	if resp.StatusCode != http.StatusPartialContent || string(body) != "DATA" || resp.Header.Get("Content-Range") != "bytes 3-6/17" {
		t.Errorf("range download: %d %q %q", resp.StatusCode, body, resp.Header.Get("Content-Range"))
	}
	if resp, _ := firebase(t, inst, "GET", "/avatars%2Fsam%2Fme.png?alt=media&token=wrong", nil, nil); resp.StatusCode != 403 {
		t.Errorf("wrong token: %d, want 403", resp.StatusCode)
	}

	// Resumable: start, two chunks with an interruption in between, query, finalize.
	resp, _ = firebase(t, inst, "POST", "?name=videos%2Fsam%2Fclip.mp4", strings.NewReader(`{"name":"videos/sam/clip.mp4","contentType":"video/mp4"}`),
		map[string]string{"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start", "X-Goog-Upload-Header-Content-Length": "10", "Content-Type": "application/json"})
	uploadURL := resp.Header.Get("X-Goog-Upload-URL")
	if resp.StatusCode != 200 || resp.Header.Get("X-Goog-Upload-Status") != "active" || uploadURL == "" {
		t.Fatalf("resumable start: %d %v", resp.StatusCode, resp.Header)
	}
	chunk := func(cmd, offset, data string) *http.Response {
		req, _ := http.NewRequest("POST", uploadURL, strings.NewReader(data))
		req.Header.Set("X-Goog-Upload-Command", cmd)
		req.Header.Set("X-Goog-Upload-Offset", offset)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := chunk("upload", "0", "01234"); r.StatusCode != 200 || r.Header.Get("X-Goog-Upload-Status") != "active" {
		t.Fatalf("chunk 1: %d", r.StatusCode)
	}
	if r := chunk("upload", "2", "xx"); r.StatusCode != 400 {
		t.Errorf("chunk at a wrong offset: %d, want 400", r.StatusCode)
	}
	if r := chunk("query", "", ""); r.Header.Get("X-Goog-Upload-Size-Received") != "5" {
		t.Errorf("query: received %q, want 5", r.Header.Get("X-Goog-Upload-Size-Received"))
	}
	if r := chunk("upload, finalize", "5", "56789"); r.StatusCode != 200 || r.Header.Get("X-Goog-Upload-Status") != "final" {
		t.Fatalf("finalize: %d", r.StatusCode)
	}
	resp, body = firebase(t, inst, "GET", "?prefix=videos%2F&delimiter=%2F", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"prefixes":["videos/sam/"]`) {
		t.Errorf("list: %d %s", resp.StatusCode, body)
	}
	for _, bad := range []string{"?name=a%2F..%2Fb", "?name=x%0Ay", "?name="} {
		if resp, _ := firebase(t, inst, "POST", bad, strings.NewReader("data"), map[string]string{"Content-Type": "text/plain"}); resp.StatusCode != 400 {
			t.Errorf("upload %s: %d, want 400", bad, resp.StatusCode)
		}
	}
	if resp, _ := firebase(t, inst, "DELETE", "/videos%2Fsam%2Fclip.mp4", nil, nil); resp.StatusCode != 204 {
		t.Errorf("delete: %d", resp.StatusCode)
	}
	tmp, _ := os.ReadDir(filepath.Join(inst.DataDir, "storage", "tmp"))
	if len(tmp) != 0 {
		t.Errorf("stray temporary files: %v", tmp)
	}
}

func TestStorage_SurvivesRestartAndExports(t *testing.T) {
	dir := t.TempDir()
	inst := loupetest.Start(t, loupetest.Options{Process: true, DataDir: dir})
	write(t, client(t, inst), "kept.txt", []byte("kept"), 0)
	inst.Kill()
	export := t.TempDir() + "/export"
	inst = loupetest.Start(t, loupetest.Options{DataDir: dir, Args: []string{"--export-on-exit", export}})
	inst.Stop(t)
	inst = loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--import", export}})
	r, err := client(t, inst).Bucket(bucket).Object("kept.txt").NewReader(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(r)
	r.Close()
	if string(data) != "kept" {
		t.Errorf("after restart, export and import: %q", data)
	}
}
