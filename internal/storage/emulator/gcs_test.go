package emulator_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/loupe-dev/loupe/internal/loupetest/inproc"
	"google.golang.org/api/iterator"
)

// TestGCSGoClient drives the GCS JSON and XML APIs in process as the Go
// client (the Admin SDK's Storage) does: buckets, a multipart and a
// resumable upload in chunks, reads whole and by range, metadata reads and
// updates, listing by prefix and delimiter, a copy, an ACL entry added as
// the Node client's makePublic adds it, and deletes, with the client's
// errors for what is missing.
func TestGCSGoClient(t *testing.T) {
	h := inproc.Start(t, inproc.Options{Only: []string{"storage"}})
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(srv.URL, "http://"))
	ctx := context.Background()
	client, err := storage.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	if err := client.Bucket("other-bucket").Create(ctx, h.Project, nil); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	if attrs, err := client.Bucket("other-bucket").Attrs(ctx); err != nil || attrs.Name != "other-bucket" {
		t.Errorf("bucket attrs = %v, %v", attrs, err)
	}
	var buckets []string
	for it := client.Buckets(ctx, h.Project); ; {
		b, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		buckets = append(buckets, b.Name)
	}
	if len(buckets) == 0 || !strings.Contains(strings.Join(buckets, ","), "other-bucket") {
		t.Errorf("buckets = %v, want other-bucket among them", buckets)
	}

	bucket := client.Bucket("other-bucket")
	write := func(name, content string, chunk int) *storage.ObjectAttrs {
		t.Helper()
		w := bucket.Object(name).NewWriter(ctx)
		w.ContentType = "text/plain"
		w.Metadata = map[string]string{"k": "v"}
		w.ChunkSize = chunk
		if _, err := io.WriteString(w, content); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("upload %s: %v", name, err)
		}
		return w.Attrs()
	}
	small := write("docs/a.txt", "hello", 0) // one multipart request
	if small.Size != 5 || small.ContentType != "text/plain" || small.Metadata["k"] != "v" {
		t.Errorf("multipart upload attrs = %+v", small)
	}
	big := strings.Repeat("0123456789abcdef", 40<<10) // 640 KiB
	if attrs := write("docs/big.bin", big, 256<<10); attrs.Size != int64(len(big)) {
		t.Errorf("resumable upload in 256 KiB chunks: size %d, want %d", attrs.Size, len(big))
	}
	write("docs/sub/c.txt", "c", 0)

	read := func(o *storage.ObjectHandle, offset, length int64) string {
		t.Helper()
		r, err := o.NewRangeReader(ctx, offset, length)
		if err != nil {
			t.Fatalf("read %s: %v", o.ObjectName(), err)
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read(bucket.Object("docs/big.bin"), 0, -1); got != big {
		t.Errorf("read of docs/big.bin: %d bytes, want %d as written", len(got), len(big))
	}
	if got := read(bucket.Object("docs/a.txt"), 1, 3); got != "ell" {
		t.Errorf("range 1+3 of hello = %q, want ell", got)
	}

	updated, err := bucket.Object("docs/a.txt").Update(ctx, storage.ObjectAttrsToUpdate{ContentType: "text/markdown", Metadata: map[string]string{"k": "w"}})
	if err != nil || updated.ContentType != "text/markdown" || updated.Metadata["k"] != "w" || updated.Metageneration != 2 {
		t.Errorf("metadata update = %+v, %v; want text/markdown, k = w, metageneration 2", updated, err)
	}

	var names, prefixes []string
	for it := bucket.Objects(ctx, &storage.Query{Prefix: "docs/", Delimiter: "/"}); ; {
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
	if strings.Join(names, ",") != "docs/a.txt,docs/big.bin" || strings.Join(prefixes, ",") != "docs/sub/" {
		t.Errorf("list docs/ by /: objects %v, prefixes %v", names, prefixes)
	}

	copied, err := bucket.Object("copy.txt").CopierFrom(bucket.Object("docs/a.txt")).Run(ctx)
	if err != nil || copied.Size != 5 || copied.ContentType != "text/markdown" {
		t.Fatalf("copy = %+v, %v", copied, err)
	}
	if got := read(bucket.Object("copy.txt"), 0, -1); got != "hello" {
		t.Errorf("the copy reads %q, want hello", got)
	}

	acl := func(body string) (int, string) {
		resp, err := http.Post(srv.URL+"/b/other-bucket/o/copy.txt/acl", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, out := acl(`{"entity":"allUsers","role":"READER"}`); code != http.StatusOK || !strings.Contains(out, `"entity":"allUsers"`) {
		t.Errorf("ACL insert = %d %s, want 200 and the entry", code, out)
	}
	if attrs, err := bucket.Object("copy.txt").Attrs(ctx); err != nil || attrs.Metageneration != 2 {
		t.Errorf("after the ACL insert: %+v, %v; want metageneration 2", attrs, err)
	}
	if code, _ := acl(`{"role":"READER"}`); code != http.StatusBadRequest {
		t.Errorf("ACL insert without an entity = %d, want 400", code)
	}
	if err := bucket.Object("copy.txt").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := bucket.Object("copy.txt").Attrs(ctx); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Errorf("attrs after delete: %v, want ErrObjectNotExist", err)
	}
	if err := bucket.Object("copy.txt").Delete(ctx); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Errorf("delete of a deleted object: %v, want ErrObjectNotExist", err)
	}
	if _, err := bucket.Object("nope").NewReader(ctx); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Errorf("read of a missing object: %v, want ErrObjectNotExist", err)
	}
	if _, err := client.Bucket("no-such-bucket").Attrs(ctx); !errors.Is(err, storage.ErrBucketNotExist) {
		t.Errorf("attrs of a missing bucket: %v, want ErrBucketNotExist", err)
	}
}
