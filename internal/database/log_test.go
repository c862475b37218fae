package database

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyFolder copies the files of the testdata folder name into a new
// temporary folder.
func copyFolder(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("testdata", name, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCommitLog_OpensAFolderWithASnapshot opens a data folder as versions
// that kept a snapshot file beside the log wrote it (testdata: a snapshot
// with namespaces "ns" and "gone", then a log that empties "gone"): the
// data is there, the snapshot is folded into the log and removed, and
// should its removal not have reached the disk, the folder still opens
// with the same data.
func TestCommitLog_OpensAFolderWithASnapshot(t *testing.T) {
	dir := copyFolder(t, "folder-with-snapshot")
	const want = `{"a":{"x":2,".priority":"p"},"html":"<b>&amp;</b> ` + "\u2028" + ` \n\"q\"","list":{"0":1,"1":2}}`
	e := open(t, dir)
	if got := get(t, e, "/"); got != want {
		t.Fatalf("opened: %s, want %s", got, want)
	}
	if !e.Root("gone").IsEmpty() {
		t.Fatalf("the emptied namespace holds %s", e.Root("gone").ExportJSON())
	}
	if _, err := os.Stat(filepath.Join(dir, legacySnapshotFile)); !os.IsNotExist(err) {
		t.Fatalf("the snapshot file is still there: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	snapshot, err := os.ReadFile(filepath.Join("testdata", "folder-with-snapshot", legacySnapshotFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, legacySnapshotFile), snapshot, 0o644); err != nil {
		t.Fatal(err)
	}
	e = open(t, dir)
	if got := get(t, e, "/"); got != want {
		t.Fatalf("reopened over the old snapshot: %s, want %s", got, want)
	}
	if !e.Root("gone").IsEmpty() {
		t.Fatalf("reopened over the old snapshot, the emptied namespace holds %s", e.Root("gone").ExportJSON())
	}
}

// TestEngine_FolderStaysWithinTwiceTheTree overwrites a 1.5 MiB value,
// before and after a restart: after each write the data folder holds at
// most twice the tree, and the last value survives the restart.
func TestEngine_FolderStaysWithinTwiceTheTree(t *testing.T) {
	dir := t.TempDir()
	const tree = 3<<19 + 100 // the value and its record's JSON and frame
	big := func(i int) string { return `"` + strings.Repeat(string(rune('a'+i)), 3<<19) + `"` }
	e := open(t, dir)
	for i := range 8 {
		if i == 4 {
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			e = open(t, dir)
			if got := get(t, e, "/big"); got != big(3) {
				t.Fatalf("after restart /big is %d bytes starting %.10s", len(got), got)
			}
		}
		set(t, e, "/big", big(i))
		if size := folderSize(t, dir); size > 2*tree {
			t.Fatalf("after overwrite %d the folder holds %d bytes", i+1, size)
		}
	}
}

// folderSize is the bytes of the files in dir.
func folderSize(t *testing.T, dir string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		n += info.Size()
	}
	return n
}

func TestAppendString_EscapesAsJSONStringify(t *testing.T) {
	for _, row := range []struct{ in, want string }{
		{"plain", `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x1f\x7f", `"\u0000\u001f` + "\x7f" + `"`},
		{"é\u2028<&>", `"é` + "\u2028" + `<&>"`},
		{"", `""`},
	} {
		if got := AppendString([]byte("x"), row.in); !bytes.Equal(got, []byte("x"+row.want)) {
			t.Errorf("AppendString(%q) = %s, want %s", row.in, got[1:], row.want)
		}
	}
}
