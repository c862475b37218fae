package storage_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// Every answer of 400 and above that the tests of this package receive
// (through call, firebase, http.DefaultClient and the Go SDK's client) is
// recorded, and TestMain fails the run if one names a server path.
var answered struct {
	sync.Mutex
	errors []string
}

// recorder keeps the body of each error answer.
type recorder struct{ next http.RoundTripper }

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	answered.Lock()
	answered.errors = append(answered.errors, fmt.Sprintf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, data))
	answered.Unlock()
	return resp, err
}

// recordingClient is the HTTP client of the package's SDK clients.
var recordingClient = &http.Client{Transport: recorder{http.DefaultTransport}}

// serverPaths are what no error may name: the temporary folder (where the
// tests' data dirs are) and the repository.
func serverPaths() []string {
	wd, _ := os.Getwd()
	return []string{os.TempDir(), filepath.Dir(filepath.Dir(wd))}
}

// pathLeaks are the recorded errors that name a server path.
func pathLeaks() []string {
	answered.Lock()
	defer answered.Unlock()
	var leaks []string
	for _, e := range answered.errors {
		for _, p := range serverPaths() {
			if strings.Contains(e, p) {
				leaks = append(leaks, e)
				break
			}
		}
	}
	return leaks
}

func TestMain(m *testing.M) {
	http.DefaultClient.Transport = recordingClient.Transport
	code := m.Run()
	answered.Lock()
	n := len(answered.errors)
	answered.Unlock()
	if leaks := pathLeaks(); len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d of the %d error answers the storage tests provoked name a server path:\n%s\n", len(leaks), n, strings.Join(leaks, "\n"))
		code = 1
	} else if code == 0 && n < 20 && flag.Lookup("test.run").Value.String() == "" {
		// The whole suite provokes dozens: fewer means the recorder missed them.
		fmt.Fprintf(os.Stderr, "FAIL: the storage tests provoked only %d error answers; the recorder is not recording\n", n)
		code = 1
	}
	os.Exit(code)
}

// TestErrors_NameNoServerPath breaks the data dir under a running loupe
// (a folder replaced by a file, metadata damaged or made a folder) and
// checks that the failures each API answers say what failed without the
// data dir's paths.
func TestErrors_NameNoServerPath(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{})
	ctx := context.Background()
	root := filepath.Join(inst.DataDir, "storage")
	c := client(t, inst)
	write(t, c, "kept/damaged.txt", []byte("damaged"), 0)
	write(t, c, "kept/folder.txt", []byte("made a folder"), 0)
	meta := func(name string) string { // the object's metadata file, found by its content
		t.Helper()
		var found string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".meta") {
				if data, _ := os.ReadFile(p); bytes.Contains(data, []byte(`"name":"`+name+`"`)) {
					found = p
				}
			}
			return err
		})
		if found == "" {
			t.Fatalf("no metadata file names %s", name)
		}
		return found
	}
	if err := os.WriteFile(meta("kept/damaged.txt"), []byte(`{"bucket":`), 0o644); err != nil {
		t.Fatal(err)
	}
	folder := meta("kept/folder.txt")
	if err := os.Remove(folder); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	// Uploads stream into tmp/ and resumable sessions live in uploads/: make
	// each a file.
	for _, d := range []string{"tmp", "uploads"} {
		if err := os.RemoveAll(filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d), []byte("not a folder"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	v0 := inst.URL + "/v0/b/" + bucket + "/o"
	gcs := inst.URL + "/storage/v1/b/" + bucket + "/o"
	owner := map[string]string{"Authorization": "Bearer owner"}
	for _, c := range []struct {
		method, url, body string
		header            map[string]string
		code              int
		want              string
	}{
		{"POST", v0 + "?name=new.txt", "x", owner, 500, "Could not store the upload: not a directory."},
		{"POST", inst.URL + "/upload/storage/v1/b/" + bucket + "/o?uploadType=media&name=new.txt", "x", nil, 500, "Could not store the upload: not a directory."},
		{"POST", v0 + "?name=new.txt", "{}", map[string]string{"Authorization": "Bearer owner", "X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start"}, 500, "Could not start the upload: not a directory."},
		{"GET", v0 + "/kept%2Fdamaged.txt", "", owner, 500, "Could not read the metadata of " + bucket + "/kept/damaged.txt: damaged metadata."},
		{"GET", gcs + "/kept%2Fdamaged.txt", "", nil, 500, "Could not read the metadata of " + bucket + "/kept/damaged.txt: damaged metadata."},
		{"GET", gcs + "/kept%2Ffolder.txt?alt=media", "", nil, 500, "Could not read the metadata of " + bucket + "/kept/folder.txt: is a directory."},
		{"PATCH", gcs + "/kept%2Ffolder.txt", `{"contentType":"text/plain"}`, nil, 500, "Could not read the metadata"},
		{"DELETE", v0 + "/kept%2Fdamaged.txt", "", owner, 500, "Could not read the metadata"},
		{"POST", gcs + "/kept%2Fdamaged.txt/copyTo/b/" + bucket + "/o/copy.txt", "{}", nil, 500, "Could not read the metadata"},
	} {
		resp, body := call(t, c.method, c.url, strings.NewReader(c.body), c.header)
		if resp.StatusCode != c.code || !strings.Contains(string(body), c.want) {
			t.Errorf("%s %s: %d %s, want %d with %q", c.method, c.url, resp.StatusCode, body, c.code, c.want)
		}
		for _, p := range serverPaths() {
			if strings.Contains(string(body), p) {
				t.Errorf("%s %s names a server path: %s", c.method, c.url, body)
			}
		}
	}
	damaged := c.Bucket(bucket).Object("kept/damaged.txt").Retryer(storage.WithPolicy(storage.RetryNever))
	if _, err := damaged.NewReader(ctx); err == nil || strings.Contains(err.Error(), os.TempDir()) {
		t.Errorf("the Go SDK reading the damaged object: %v", err)
	}
}
