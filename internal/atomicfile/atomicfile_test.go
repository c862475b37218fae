package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite_ReplacesWholeAndLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	for _, content := range []string{"first", "second, longer"} {
		if err := Write(path, []byte(content), ""); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != content {
			t.Errorf("content = %q, want %q", got, content)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %v, want only state.json", entries)
	}
	if err := Write(filepath.Join(dir, "missing", "x"), []byte("x"), ""); err == nil {
		t.Error("writing into a missing folder: want an error")
	}
}
