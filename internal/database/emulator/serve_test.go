package emulator_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/loupe-dev/loupe/internal/loupetest/inproc"
)

// serve runs loupe's Realtime Database in the test process (the
// composition root's handler on a loopback listener, WebSocket, long
// polling and REST as loupe serve answers them) and returns it as an
// instance for loupetest's clients: only URL and Host are set.
func serve(t *testing.T) *loupetest.Instance {
	t.Helper()
	h := inproc.Start(t, inproc.Options{Only: []string{"database"}})
	srv := httptest.NewServer(h.Handler())
	t.Cleanup(srv.Close)
	return &loupetest.Instance{URL: srv.URL, Host: strings.TrimPrefix(srv.URL, "http://")}
}
