package exports_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	gcs "cloud.google.com/go/storage"
	"github.com/loupe-dev/loupe/internal/exports"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// TestServeImportsFirebaseStorageBlobs: loupe serve --import of a
// firebase emulators:export holding a few MB of objects serves each one's
// bytes to the Go storage client (GCS JSON API) and to a download by token
// (the Firebase API, as the JS SDK's getBytes asks), and leaves the
// export's blobs where they were.
func TestServeImportsFirebaseStorageBlobs(t *testing.T) {
	const n, size = 4, 1 << 20
	dir, contents := exports.FirebaseToolsWithBlobs(t, n, size)
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--import", dir, "--project", "demo-loupe"}})
	t.Setenv("STORAGE_EMULATOR_HOST", inst.Host)
	client, err := gcs.NewClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	const bucket = "demo-fixture.appspot.com"
	for i := range n {
		name := fmt.Sprintf("videos/clip %d.mp4", i)
		r, err := client.Bucket(bucket).Object(name).NewReader(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, contents[name]) {
			t.Errorf("%s through the Go client: %d bytes that differ (%v)", name, len(got), err)
		}
		resp, err := http.Get(inst.URL + "/v0/b/" + bucket + "/o/" + url.PathEscape(name) + fmt.Sprintf("?alt=media&token=tok-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		got, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil || !bytes.Equal(got, contents[name]) {
			t.Errorf("%s by token: HTTP %d, %d bytes that differ (%v)", name, resp.StatusCode, len(got), err)
		}
	}
	inst.Stop(t)
	if blobs, _ := os.ReadDir(filepath.Join(dir, exports.StorageDir, "blobs")); len(blobs) != n+3 {
		t.Errorf("the export holds %d blobs after loupe stopped, want %d", len(blobs), n+3)
	}
}
