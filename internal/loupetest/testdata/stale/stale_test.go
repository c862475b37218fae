// Package stale is run by TestBinary_ChangedBinaryIsNotCached: a test that
// starts the loupe binary at $LOUPE_BIN, so that a changed binary must make
// `go test` run it again rather than answer from its cache (a child
// process: an in-process loupe is compiled into the test).
package stale

import (
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

func TestStartsLoupe(t *testing.T) {
	loupetest.Start(t, loupetest.Options{InMemory: true, Process: true})
}
