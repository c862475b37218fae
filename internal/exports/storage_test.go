package exports

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/storage"
)

// firebaseToolsWithBlobs copies the export firebase-tools wrote into a new
// folder and adds n objects of size bytes of noise to its Storage export, in
// the layout firebase-tools writes them. It returns the folder and the added
// objects' content by name.
func firebaseToolsWithBlobs(tb testing.TB, n int, size int64) (string, map[string][]byte) {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/firebase-tools")); err != nil {
		tb.Fatal(err)
	}
	src, out := tb.TempDir(), tb.TempDir()
	contents := map[string][]byte{}
	var objects []storage.ExportedObject
	rng := rand.NewChaCha8([32]byte{1})
	created := time.Date(2026, 11, 24, 1, 2, 3, 0, time.UTC)
	for i := range n {
		data := make([]byte, size)
		_, _ = io.ReadFull(rng, data)
		name := fmt.Sprintf("videos/clip %d.mp4", i)
		content := filepath.Join(src, fmt.Sprint(i))
		if err := os.WriteFile(content, data, 0o644); err != nil {
			tb.Fatal(err)
		}
		sum := md5.Sum(data)
		contents[name] = data
		objects = append(objects, storage.ExportedObject{Content: content, Object: storage.Object{
			Bucket: "demo-fixture.appspot.com", Name: name, Size: size, ContentType: "video/mp4",
			MD5: sum[:], CRC32C: crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)),
			Generation: created.UnixMilli() + int64(i), Metageneration: 1, Created: created, Updated: created,
			Metadata: map[string]string{storage.TokenKey: fmt.Sprintf("tok-%d", i)},
		}})
	}
	if err := writeFirebaseStorage(out, nil, objects, storage.CopyFile); err != nil {
		tb.Fatal(err)
	}
	for _, sub := range []string{"metadata", "blobs"} {
		if err := os.CopyFS(filepath.Join(dir, storageDir, sub), os.DirFS(filepath.Join(out, sub))); err != nil {
			tb.Fatal(err)
		}
	}
	return dir, contents
}

// regularBytes is how many bytes the regular files under dir hold.
func regularBytes(t testing.TB, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		n += info.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// storeContent is the content of bucket/name in s.
func storeContent(t *testing.T, s *storage.Store, bucket, name string) []byte {
	t.Helper()
	_, f, err := s.Open(bucket, name)
	if err != nil {
		t.Fatalf("%s/%s: %v", bucket, name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestFirebaseStorageImportCopiesEachBlobOnce: a firebase emulators:export of
// a few MB of Storage objects is converted without copying its blobs, so the
// store's import is the one copy; the store then serves every object's
// bytes, and the export's blobs are still there once the conversion is
// removed.
func TestFirebaseStorageImportCopiesEachBlobOnce(t *testing.T) {
	const n, size = 6, 1 << 20
	dir, contents := firebaseToolsWithBlobs(t, n, size)
	p, err := Prepare(dir, "demo-loupe")
	if err != nil {
		t.Fatal(err)
	}
	if written := regularBytes(t, p.Dir); written >= size {
		t.Errorf("the conversion wrote %d bytes of files: it copied the blobs (%d × %d bytes)", written, n, size)
	}
	store, err := storage.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.ImportFrom(p.Dir); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for name, want := range contents {
		if got := storeContent(t, store, "demo-fixture.appspot.com", name); !bytes.Equal(got, want) {
			t.Errorf("%s: the store holds %d bytes that differ from the export's %d", name, len(got), len(want))
		}
	}
	if got := storeContent(t, store, "demo-fixture.appspot.com", "notes/hello world.txt"); string(got) != "hello from firebase-tools\n" {
		t.Errorf("firebase-tools' own object: %q", got)
	}
	blobs, _ := os.ReadDir(filepath.Join(dir, storageDir, "blobs"))
	if len(blobs) != n+3 {
		t.Errorf("the export holds %d blobs after the import, want %d", len(blobs), n+3)
	}
}

// TestStoreImportFailingPartWayChangesNothing: when an object's content in
// a converted export cannot be read by the time the store imports it, the
// import fails and the store keeps exactly what it held.
func TestStoreImportFailingPartWayChangesNothing(t *testing.T) {
	dir, contents := firebaseToolsWithBlobs(t, 3, 64<<10)
	store := importedStore(t, "testdata/firebase-tools")
	p2, err := Prepare(dir, "demo-loupe")
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	_, objects, err := storage.ReadExport(p2.Dir)
	if err != nil {
		t.Fatal(err)
	}
	last := objects[len(objects)-1].Content // the last object the import copies
	if err := os.Remove(last); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "gone"), last); err != nil {
		t.Fatal(err)
	}
	if err := store.ImportFrom(p2.Dir); err == nil {
		t.Fatalf("the import of an export whose content %s is gone succeeded", last)
	}
	if got := storeContent(t, store, "demo-fixture-extra", "a/b/c.json"); string(got) != `{"x":1}` {
		t.Errorf("after a failed import a/b/c.json holds %q", got)
	}
	for name := range contents {
		if _, err := store.Get("demo-fixture.appspot.com", name); err == nil {
			t.Errorf("a failed import left %s in the store", name)
		}
	}
}

// BenchmarkImportFirebaseStorage: a firebase emulators:export of 16 objects
// of 1 MiB converted and imported into a store, as loupe serve --import does.
// converted-B/op is what the conversion writes to disk besides the store.
func BenchmarkImportFirebaseStorage(b *testing.B) {
	const n, size = 16, 1 << 20
	dir, _ := firebaseToolsWithBlobs(b, n, size)
	store, err := storage.OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(n * size)
	var converted int64
	for b.Loop() {
		p, err := Prepare(dir, "demo-loupe")
		if err != nil {
			b.Fatal(err)
		}
		if err := store.ImportFrom(p.Dir); err != nil {
			b.Fatal(err)
		}
		converted = regularBytes(b, p.Dir)
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(converted), "converted-B/op")
}

// TestConverterExportMovesStorageContent: an export in Firebase's layout
// moves each object's content out of the loupe-layout folder the server
// wrote for it (on one file system) rather than copying it a second time;
// the export holds the content itself, and imports back the same.
func TestConverterExportMovesStorageContent(t *testing.T) {
	src, contents := firebaseToolsWithBlobs(t, 3, 256<<10)
	store := importedStore(t, src)
	parent := t.TempDir()
	own, dst := filepath.Join(parent, "own"), filepath.Join(parent, "export")
	if err := store.ExportTo(own); err != nil {
		t.Fatal(err)
	}
	if err := (Converter{Project: "demo-loupe"}).Export(own, dst, FormatFirebase); err != nil {
		t.Fatal(err)
	}
	if left := regularBytes(t, own); left >= 256<<10 {
		t.Errorf("%d bytes of content are still in the server's folder: they were copied, not moved", left)
	}
	if written := regularBytes(t, filepath.Join(dst, storageDir, "blobs")); written < 3*256<<10 {
		t.Errorf("the export's blobs hold %d bytes", written)
	}
	again := importedStore(t, dst)
	for name, want := range contents {
		if got := storeContent(t, again, "demo-fixture.appspot.com", name); !bytes.Equal(got, want) {
			t.Errorf("%s after export and import: %d bytes that differ", name, len(got))
		}
	}
}

// importedStore is a new store holding the Storage objects of the export
// at dir, imported as loupe serve --import does.
func importedStore(t *testing.T, dir string) *storage.Store {
	t.Helper()
	p, err := Prepare(dir, "demo-loupe")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	store, err := storage.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.ImportFrom(p.Dir); err != nil {
		t.Fatal(err)
	}
	return store
}
