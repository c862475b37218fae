package storage_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// multipartBody is a multipart/related upload as the SDKs send it: the
// metadata part naming the object, then the content.
const multipartBody = "--b1\r\ncontent-type: application/json\r\n\r\n{\"name\":\"gcs/multipart.txt\"}\r\n" +
	"--b1\r\ncontent-type: text/plain\r\n\r\nhello there!\r\n--b1--\r\n"

// TestService_UploadProtocols: the upload forms firebase-tools' conformance
// tests send over the wire: the protocol named by X-Goog-Upload-Protocol,
// a content type that is not multipart refused as GCS and Firebase refuse
// it, and a GCS resumable PUT without Content-Range finishing the upload.
func TestService_UploadProtocols(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	gcs := inst.URL + "/upload/storage/v1/b/" + bucket + "/o"
	for _, c := range []struct {
		name, url, contentType string
		header                 map[string]string
		code                   int
		contains               string
	}{
		{"GCS: X-Goog-Upload-Protocol multipart, the name in the metadata", gcs, "multipart/related; boundary=b1",
			map[string]string{"X-Goog-Upload-Protocol": "multipart"}, 200, `"name":"gcs/multipart.txt"`},
		{"GCS: X-Upload-Content-Type sets the type", gcs + "?uploadType=multipart", "multipart/related; boundary=b1",
			map[string]string{"X-Upload-Content-Type": "text/markdown"}, 200, `"contentType":"text/markdown"`},
		{"GCS: multipart with a content type that is not", gcs + "?name=gcs/x.txt", "foo",
			map[string]string{"X-Goog-Upload-Protocol": "multipart"}, 400, "Bad content type. foo"},
		{"Firebase: multipart with a content type that is not", inst.URL + "/v0/b/" + bucket + "/o?name=x.txt", "foo",
			map[string]string{"X-Goog-Upload-Protocol": "multipart", "Authorization": "Bearer owner"}, 400, "Bad content type. foo"},
	} {
		header := map[string]string{"Content-Type": c.contentType}
		for k, v := range c.header {
			header[k] = v
		}
		resp, body := call(t, "POST", c.url, strings.NewReader(multipartBody), header)
		if resp.StatusCode != c.code || !strings.Contains(string(body), c.contains) {
			t.Errorf("%s: %d %s, want %d with %q", c.name, resp.StatusCode, body, c.code, c.contains)
		}
	}
	resp, data := firebase(t, inst, "GET", "/gcs%2Fmultipart.txt?alt=media", nil, nil)
	if string(data) != "hello there!" {
		t.Errorf("the multipart upload's content: %d %q", resp.StatusCode, data)
	}

	// A resumable session finished by one PUT of the whole body, without
	// Content-Range, as firebase-tools' tests finish theirs.
	resp, _ = call(t, "POST", gcs+"?uploadType=resumable&name=gcs/resumable.txt", strings.NewReader(`{"contentDisposition":"initialCommit"}`),
		map[string]string{"Content-Type": "application/json", "X-Upload-Content-Type": "image/png"})
	location := resp.Header.Get("Location")
	if resp.StatusCode != 200 || location == "" {
		t.Fatalf("resumable start: %d", resp.StatusCode)
	}
	resp, data = call(t, "PUT", location, strings.NewReader("the whole body"), nil)
	if resp.StatusCode != 200 || !strings.Contains(string(data), `"size":"14"`) || !strings.Contains(string(data), `"contentType":"image/png"`) ||
		!strings.Contains(string(data), `"contentDisposition":"initialCommit"`) {
		t.Fatalf("PUT without Content-Range: %d %s", resp.StatusCode, data)
	}
	got, err := http.Get(inst.URL + "/" + bucket + "/gcs/resumable.txt")
	if err != nil {
		t.Fatal(err)
	}
	content, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if string(content) != "the whole body" {
		t.Errorf("the resumable upload's content: %q", content)
	}
}
