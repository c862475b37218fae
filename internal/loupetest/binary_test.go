package loupetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runStale runs testdata/stale (a test that starts $LOUPE_BIN) through the
// go command, with its test cache, and returns what it printed.
func runStale(bin string, args ...string) (string, error) {
	cmd := exec.Command("go", append([]string{"test", "-run", "TestStartsLoupe"}, append(args, "./testdata/stale")...)...)
	cmd.Env = append(os.Environ(), "LOUPE_BIN="+bin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestBinary_ChangedBinaryIsNotCached runs a test that starts $LOUPE_BIN
// (inside the module, as make test's is) three times through `go test`,
// replacing the binary with one that exits 1 before the third: the third run
// must fail rather than answer "ok (cached)" with the earlier result.
func TestBinary_ChangedBinaryIsNotCached(t *testing.T) {
	real := Binary(t)
	content, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	// Inside the module, as make test's bin/loupe is.
	bin, err := filepath.Abs(filepath.Join("..", "..", "bin", "loupetest", fmt.Sprintf("stale.%d", os.Getpid())))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(bin) })
	// The go command caches no result whose inputs changed in the last two
	// seconds; age the binary so that the first result is cached.
	write := func(content []byte, age time.Duration) {
		t.Helper()
		if err := os.WriteFile(bin, content, 0o755); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(bin, when, when); err != nil {
			t.Fatal(err)
		}
	}
	write(content, time.Minute)
	if out, err := runStale(bin); err != nil {
		t.Fatalf("the first run against the real binary failed: %v\n%s", err, out)
	}
	if out, err := runStale(bin); err != nil || !strings.Contains(out, "(cached)") {
		t.Fatalf("the second run, with nothing changed, should come from the cache: %v\n%s", err, out)
	}
	write([]byte("#!/bin/sh\nexit 1\n"), 30*time.Second)
	if out, err := runStale(bin); err == nil {
		t.Fatalf("a test against a binary that exits 1 passed (the cache answered for the old binary):\n%s", out)
	}
}

// TestBinary_OutsideTheModuleNeedsCountOne: the go command never rechecks a
// file outside the module, so a run against a $LOUPE_BIN there that was
// replaced would answer "ok (cached)"; it is refused while results may be
// cached, and used with -count=1.
func TestBinary_OutsideTheModuleNeedsCountOne(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "loupe")
	content, err := os.ReadFile(Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, content, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := runStale(outside); err == nil || !strings.Contains(out, "outside the module") {
		t.Fatalf("a cacheable run against a binary outside the module: %v\n%s", err, out)
	}
	if out, err := runStale(outside, "-count=1"); err != nil {
		t.Fatalf("a -count=1 run against a binary outside the module: %v\n%s", err, out)
	}
}
