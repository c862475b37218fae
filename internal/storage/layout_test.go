package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// commit stores content as bucket/name through the store.
func commit(t *testing.T, st *Store, bucket, name, content string) *Object {
	t.Helper()
	p, err := st.copyTo(strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	o, err := p.Commit(Object{Bucket: bucket, Name: name})
	if err != nil {
		t.Fatalf("commit %q: %v", name, err)
	}
	return o
}

// read returns an object's content through the store.
func read(t *testing.T, st *Store, bucket, name string) string {
	t.Helper()
	_, f, err := st.Open(bucket, name)
	if err != nil {
		t.Fatalf("open %s/%s: %v", bucket, name, err)
	}
	defer f.Close()
	data, _ := io.ReadAll(f)
	return string(data)
}

// TestStore_NamesAreNotFileNames: names of up to 1,024 bytes, names that
// differ only in case and names no file system allows all store, read and
// list, and no file the store writes is named after them.
func TestStore_NamesAreNotFileNames(t *testing.T) {
	root := t.TempDir()
	st, err := OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{
		"testing/" + strings.Repeat("long", 180) + "image.png",
		strings.Repeat("é", 512), // 1,024 bytes of UTF-8 in one segment
		"Photo.PNG", "photo.png",
		`con/aux/nul.txt`, `a:b*c?d"e<f>g|h\i`, "trailing. ",
	}
	for _, n := range names {
		commit(t, st, "Bucket.Name", n, "content of "+n)
	}
	if st, err = OpenStore(root); err != nil { // and again from disk
		t.Fatal(err)
	}
	for _, n := range names {
		if got := read(t, st, "Bucket.Name", n); got != "content of "+n {
			t.Errorf("%q reads %q", n, got)
		}
	}
	objects, _, _ := st.List("Bucket.Name", "", "", "", 0)
	var listed []string
	for _, o := range objects {
		listed = append(listed, o.Name)
	}
	want := slices.Clone(names)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf("listed %q, want %q", listed, want)
	}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n := d.Name(); len(n) > 100 || strings.ContainsAny(n, `:*?"<>|\`) || strings.Contains(strings.ToLower(n), "photo") {
			t.Errorf("a file named after a user's name: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// legacyStore writes a store in the layout before ids: buckets/{escaped
// bucket}/{escaped name}.meta beside {escaped name}#{generation}.
func legacyStore(t *testing.T, root string, objects map[string]string, damaged bool) {
	t.Helper()
	dir := filepath.Join(root, "buckets", url.PathEscape("b.appspot.com"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gen := int64(1000)
	for name, content := range objects {
		gen++
		o := Object{Bucket: "b.appspot.com", Name: name, Size: int64(len(content)), Generation: gen, Metageneration: 1}
		meta, _ := json.Marshal(o)
		p := filepath.Join(dir, url.PathEscape(name))
		if err := os.WriteFile(p+".meta", meta, 0o644); err != nil {
			t.Fatal(err)
		}
		contentFile := contentPath(p, gen)
		if name == "old/no-generation.txt" {
			contentFile = p // content from before generations had files of their own
		}
		if err := os.WriteFile(contentFile, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !damaged {
		return
	}
	// A damaged object: its files are kept for repair.
	p := filepath.Join(dir, url.PathEscape("videos/damaged.bin"))
	if err := os.WriteFile(p+".meta", []byte(`{"bucket":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(contentPath(p, 7), []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStore_MigratesTheLegacyLayout: a data dir written before ids opens
// with every object readable and listed, the damaged one's files kept, and
// the migration survives a crash at each step.
func TestStore_MigratesTheLegacyLayout(t *testing.T) {
	objects := map[string]string{"videos/sam/clip.mp4": "clip", "old/no-generation.txt": "old", "a b/c%2Fd.txt": "escaped"}
	check := func(t *testing.T, root string, extra int) {
		t.Helper()
		st, err := OpenStore(root)
		if err != nil {
			t.Fatal(err)
		}
		for name, content := range objects {
			if got := read(t, st, "b.appspot.com", name); got != content {
				t.Errorf("%q reads %q, want %q", name, got, content)
			}
		}
		if listed, _, _ := st.List("b.appspot.com", "", "", "", 0); len(listed) != len(objects)+extra {
			t.Errorf("listed %d objects, want %d", len(listed), len(objects)+extra)
		}
		if _, err := st.Get("b.appspot.com", "videos/damaged.bin"); err == nil || err == ErrNotFound {
			t.Errorf("the damaged object: %v, want an error", err)
		}
		damaged := st.objectPath("b.appspot.com", "videos/damaged.bin")
		if _, err := os.Stat(contentPath(damaged, 7)); err != nil {
			t.Errorf("the damaged object's content was not kept: %v", err)
		}
		if _, err := os.Stat(filepath.Join(root, "buckets")); !os.IsNotExist(err) {
			t.Errorf("buckets/ after the migration: %v", err)
		}
		if !slices.Equal(st.Buckets(), []string{"b.appspot.com"}) {
			t.Errorf("buckets %v", st.Buckets())
		}
	}
	t.Run("a clean start", func(t *testing.T) {
		root := t.TempDir()
		legacyStore(t, root, objects, true)
		check(t, root, 0)
	})
	t.Run("a crash while the new folder was built", func(t *testing.T) {
		root := t.TempDir()
		legacyStore(t, root, objects, true)
		half := filepath.Join(root, "tmp", "migrate", id("b.appspot.com"))
		if err := os.MkdirAll(half, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(half, bucketFile), []byte(`{"name":"b.appspot.com"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, objectsDir), 0o755); err != nil {
			t.Fatal(err)
		}
		check(t, root, 0)
	})
	t.Run("a crash before the old folder was removed", func(t *testing.T) {
		root := t.TempDir()
		legacyStore(t, root, objects, true)
		st, err := OpenStore(root)
		if err != nil {
			t.Fatal(err)
		}
		commit(t, st, "b.appspot.com", "new.txt", "written after the migration")
		legacyStore(t, root, map[string]string{"videos/sam/clip.mp4": "stale"}, true) // buckets/ back, as if never removed
		check(t, root, 1)
		if st, _ := OpenStore(root); read(t, st, "b.appspot.com", "new.txt") != "written after the migration" {
			t.Error("an object written after the migration was lost")
		}
	})
}

// TestStore_ImportsALegacyExport: an export in the layout before ids
// imports, converted; the store's own exports import back whole.
func TestStore_ImportsALegacyExport(t *testing.T) {
	export := t.TempDir()
	legacyStore(t, filepath.Join(export, ExportDir), map[string]string{"videos/sam/clip.mp4": "clip"}, false)
	st, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ImportFrom(export); err != nil {
		t.Fatal(err)
	}
	if got := read(t, st, "b.appspot.com", "videos/sam/clip.mp4"); got != "clip" {
		t.Errorf("imported %q", got)
	}
	again := t.TempDir()
	if err := st.ExportTo(again); err != nil {
		t.Fatal(err)
	}
	_, exported, err := ReadExport(again)
	if err != nil || len(exported) != 1 {
		t.Fatalf("ReadExport of the new layout: %v, %v", exported, err)
	}
	data, _ := os.ReadFile(exported[0].Content)
	if !bytes.Equal(data, []byte("clip")) {
		t.Errorf("exported content %q", data)
	}
}

// TestIndex_AfterWalksPastABatch lists names across several of after's
// batches: every name under the prefix and after the start comes once, in
// order, and stopping early stops the walk.
func TestIndex_AfterWalksPastABatch(t *testing.T) {
	x := &index{buckets: map[string][]string{}}
	var want []string
	for i := range 3000 {
		name := fmt.Sprintf("a/%05d", i)
		x.add("b", name)
		if name > "a/00100" {
			want = append(want, name)
		}
		x.add("b", fmt.Sprintf("b/%05d", i))
	}
	var got []string
	x.after("b", "a/", "a/00100", func(name string) bool { got = append(got, name); return true })
	if !slices.Equal(got, want) {
		t.Fatalf("after listed %d names (first %q), want %d", len(got), got[:min(1, len(got))], len(want))
	}
	got = nil
	x.after("b", "a/", "", func(name string) bool { got = append(got, name); return len(got) < 1500 })
	if len(got) != 1500 || got[1499] != "a/01499" {
		t.Fatalf("stopped walk listed %d names ending %q, want 1500 ending a/01499", len(got), got[len(got)-1])
	}
}
