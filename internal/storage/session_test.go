package storage

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStore_OpenStore(t *testing.T) {
	root := t.TempDir()
	st, err := OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	fresh, stale := NewToken(), NewToken()
	for _, id := range []string{fresh, stale} {
		p, err := st.createSession(id, session{Meta: Object{Bucket: "b", Name: "v.mp4"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write([]byte("part")); err != nil {
			t.Fatal(err)
		}
		p.f.Close()
	}
	old := time.Now().Add(-sessionLifetime - time.Hour)
	for _, f := range []string{st.sessionPath(stale), st.sessionPath(stale) + ".json"} {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "tmp", "crashed-upload"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}

	st, err = OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	if tmp, _ := os.ReadDir(filepath.Join(root, "tmp")); len(tmp) != 0 {
		t.Errorf("temporary files left after a reopen: %v", tmp)
	}
	u, err := st.loadSession(fresh)
	if err != nil || u.pending.Size() != 4 || u.Meta().Name != "v.mp4" {
		t.Fatalf("a fresh session after a reopen: %+v, %v", u, err)
	}
	u.pending.f.Close()
	if _, err := st.loadSession(stale); err != ErrNotFound {
		t.Errorf("a session older than a week: %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(st.sessionPath(stale)); !os.IsNotExist(err) {
		t.Errorf("the expired session's content is still on disk: %v", err)
	}
}
