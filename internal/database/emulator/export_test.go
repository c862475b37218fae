package emulator

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/loupe-dev/loupe/internal/database"
	"github.com/loupe-dev/loupe/internal/server"
)

// ServeSessions runs the wire protocol alone (every path is /.ws) over an
// in-memory engine whose reads and writes authz judges, a test's hook into
// the engine's steps, and returns its base URL.
func ServeSessions(t *testing.T, authz database.Authorizer) string {
	t.Helper()
	s, err := New(server.Env{ProjectID: "demo-loupe", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s.Engine.SetAuthorizer(authz)
	srv := httptest.NewServer(http.HandlerFunc(s.serveWebSocket))
	t.Cleanup(func() { srv.Close(); _ = s.Close() })
	return srv.URL
}
