package auth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/wal"
)

// mustRun applies f to s as one request and fails the test on a log error.
func mustRun(t *testing.T, s *store, f func() error) error {
	t.Helper()
	apiErr, err := s.run(f)
	if err != nil {
		t.Fatal(err)
	}
	return apiErr
}

func testUser(id, email string) *User {
	u := &User{LocalID: id, Email: email, CreatedAt: "1"}
	u.setPassword("secret1", time.Unix(1, 0))
	return u
}

func TestStore_ReplaysTheLog(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		mustRun(t, s, func() error { s.project("p").put(testUser(id, id+"@loupe.dev")); return nil })
	}
	mustRun(t, s, func() error { s.project("p").remove("b"); return nil })
	mustRun(t, s, func() error {
		u := s.project("p").byEmail("c@loupe.dev")
		u.Email = "see@loupe.dev"
		u.ProviderUserInfo = []ProviderInfo{{ProviderID: "google.com", RawID: "g1"}}
		return nil
	})
	mustRun(t, s, func() error {
		p := s.project("p")
		p.send(OOBCode{Email: "a@loupe.dev", RequestType: "PASSWORD_RESET", OOBCode: "used"}, "a")
		p.send(OOBCode{Email: "a@loupe.dev", RequestType: "PASSWORD_RESET", OOBCode: "live", ContinueURL: "/next"}, "a")
		p.useUp("used")
		return nil
	})
	mustRun(t, s, func() error { s.project("q").put(testUser("z", "z@loupe.dev")); return nil })
	mustRun(t, s, func() error { s.project("q").clear(); return nil })
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	// A crash in the middle of an append leaves a line without its newline.
	f, _ := os.OpenFile(filepath.Join(dir, logName), os.O_WRONLY|os.O_APPEND, 0o644)
	_, _ = f.WriteString(`[{"project":"p","put":{"localId":"torn`)
	f.Close()

	for round := range 2 { // the second open reads the compacted log
		s, err = openStore(dir)
		if err != nil {
			t.Fatalf("open %d: %v", round, err)
		}
		p := s.project("p")
		if len(p.users) != 2 || p.users["b"] != nil || p.users["torn"] != nil {
			t.Errorf("open %d: users %v", round, p.users)
		}
		if u := p.byEmail("A@loupe.dev"); u == nil || u.LocalID != "a" {
			t.Errorf("open %d: a is not found by e-mail", round)
		}
		if p.byEmail("c@loupe.dev") != nil || p.byEmail("see@loupe.dev") == nil || p.byProvider("google.com", "g1") == nil {
			t.Errorf("open %d: the index does not follow c's changes: %v", round, p.index)
		}
		if len(p.mail) != 2 || p.mail[1].ContinueURL != "/next" || p.codes["live"] != "a" || p.codes["used"] != "" {
			t.Errorf("open %d: mail %+v codes %v", round, p.mail, p.codes)
		}
		if q := s.project("q"); len(q.users) != 0 || len(q.index) != 0 {
			t.Errorf("open %d: the cleared project has %v", round, q.users)
		}
		p.forget()
		if err := s.close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStore_RefusesACorruptLine(t *testing.T) {
	dir := t.TempDir()
	data := "not json\n" + `[{"project":"p","reset":true}]` + "\n"
	if err := os.WriteFile(filepath.Join(dir, logName), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := openStore(dir); err == nil || !strings.Contains(err.Error(), "is corrupt at byte 0") {
		t.Errorf("got %v, want an error naming the first record", err)
	}
}

func TestStore_FailedRequestChangesNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, func() error { s.project("p").put(testUser("a", "a@loupe.dev")); return nil })
	apiErr := mustRun(t, s, func() error {
		p := s.project("p")
		p.user("a").Email = "new@loupe.dev"
		p.put(testUser("b", "b@loupe.dev"))
		p.send(OOBCode{OOBCode: "x"}, "a")
		return errWeakPassword
	})
	if apiErr != errWeakPassword {
		t.Fatalf("run returned %v", apiErr)
	}
	check := func(when string) {
		p := s.project("p")
		if len(p.users) != 1 || p.users["a"].Email != "a@loupe.dev" || p.byEmail("new@loupe.dev") != nil || len(p.mail) != 0 || len(p.codes) != 0 {
			t.Errorf("%s: a failed request left users %v mail %v", when, p.users, p.mail)
		}
		p.forget()
	}
	check("in memory")
	_ = s.close()
	if s, err = openStore(dir); err != nil {
		t.Fatal(err)
	}
	check("after reopening")
	_ = s.close()
}

func TestStore_ReadsSingleRecordLines(t *testing.T) {
	dir := t.TempDir()
	data := `{"project":"p","reset":true}` + "\n" + `{"project":"p","put":{"localId":"a","email":"a@loupe.dev"}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, logName), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if s.project("p").byEmail("a@loupe.dev") == nil {
		t.Errorf("the user of a single-record line is missing: %v", s.project("p").users)
	}
}

func TestStore_MigratesTheWholeFileStore(t *testing.T) {
	dir := t.TempDir()
	legacy := `{"demo":{"users":{"u1":{"localId":"u1","email":"old@loupe.dev","emailVerified":true}},"mail":[{"email":"old@loupe.dev","requestType":"VERIFY_EMAIL","oobCode":"c","oobLink":"l","sentAt":"2026-01-01T00:00:00Z"}]}}`
	if err := os.WriteFile(filepath.Join(dir, legacyName), []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if u := s.project("demo").byEmail("old@loupe.dev"); u == nil || !u.verified() || len(s.project("demo").mail) != 1 {
		t.Errorf("migrated project: %+v", s.project("demo"))
	}
	if _, err := os.Stat(filepath.Join(dir, legacyName)); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", legacyName, err)
	}
}

func TestStore_CompactsWhileServing(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.log.minRecords = 50
	mustRun(t, s, func() error { s.project("p").put(testUser("a", "a@loupe.dev")); return nil })
	for i := range 200 {
		mustRun(t, s, func() error { s.project("p").user("a").DisplayName = strings.Repeat("x", i); return nil })
	}
	if n := s.log.Records(); n > 100 {
		t.Errorf("the log holds %d records for one user", n)
	}
	_ = s.close()
	if s, err = openStore(dir); err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if u := s.project("p").user("a"); u == nil || len(u.DisplayName) != 199 {
		t.Errorf("after compaction and reopening: %+v", u)
	}
}

// fullDisk fails every write, as a full disk does.
type fullDisk struct{ wal.File }

func (fullDisk) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestStore_FailedWriteChangesNothing: a change the log cannot hold (a full
// disk) fails its request and is gone from memory too, so that what the
// emulator answers is what a restart would find; writes succeed again once
// the disk has room.
func TestStore_FailedWriteChangesNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, func() error { s.project("p").put(testUser("a", "a@loupe.dev")); return nil })
	disk := s.log.SwapFile(nil)
	s.log.SwapFile(fullDisk{disk})
	_, err = s.run(func() error {
		p := s.project("p")
		p.put(testUser("b", "b@loupe.dev"))
		p.user("a").DisplayName = "changed"
		return nil
	})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a change on a full disk: %v, want ENOSPC", err)
	}
	check := func(when string) {
		t.Helper()
		p := s.project("p")
		if p.user("b") != nil || p.byEmail("b@loupe.dev") != nil || p.user("a") == nil || p.user("a").DisplayName != "" {
			t.Errorf("%s: users %v", when, p.users)
		}
		p.forget()
	}
	check("after the failed write")
	s.log.SwapFile(disk)
	mustRun(t, s, func() error { s.project("p").put(testUser("c", "c@loupe.dev")); return nil })
	_ = s.close()
	if s, err = openStore(dir); err != nil {
		t.Fatal(err)
	}
	defer s.close()
	check("after reopening")
	if s.project("p").user("c") == nil {
		t.Error("the write after the disk had room again is missing")
	}
}

// heldFullDisk holds a write until released, then fails it as a full disk.
type heldFullDisk struct {
	wal.File
	writing, release chan struct{}
}

func (d heldFullDisk) Write([]byte) (int, error) {
	close(d.writing)
	<-d.release
	return 0, syscall.ENOSPC
}

// TestStore_ReadsWaitForWhatTheySaw: a request that reads a change not yet
// durable answers only once it is, and fails rather than answer with a
// change the disk then refuses.
func TestStore_ReadsWaitForWhatTheySaw(t *testing.T) {
	s, err := openStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	disk := heldFullDisk{File: s.log.SwapFile(nil), writing: make(chan struct{}), release: make(chan struct{})}
	s.log.SwapFile(disk)
	var released sync.Once
	release := func() { released.Do(func() { close(disk.release) }) }
	defer release() // before s.close, which waits for the held write
	wrote := make(chan error, 1)
	go func() {
		_, err := s.run(func() error { s.project("p").put(testUser("b", "b@loupe.dev")); return nil })
		wrote <- err
	}()
	<-disk.writing
	read := make(chan error, 1)
	var saw bool
	go func() {
		_, err := s.run(func() error { saw = s.project("p").byEmail("b@loupe.dev") != nil; return nil })
		read <- err
	}()
	select {
	case err := <-read:
		t.Fatalf("the read answered (err %v) while the change it saw was not durable", err)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	if err := <-wrote; err == nil {
		t.Fatal("the write on a full disk succeeded")
	}
	if err := <-read; saw && err == nil {
		t.Error("the read answered with an account the disk refused")
	}
}
