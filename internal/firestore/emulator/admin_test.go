package emulator_test

import (
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/loupe-dev/loupe/internal/loupetest/inproc"
)

// TestAdminEndpoints: the emulator's own endpoints, in process: a restore
// keeps the documents' own create and update times (loupe data pull's way
// in), a restore that is not documents is refused with where it went
// wrong, the indexes report names the composite index a query needed, and clearFirestore's DELETE empties
// the database.
func TestAdminEndpoints(t *testing.T) {
	h := inproc.Start(t, inproc.Options{Only: []string{"firestore"}})
	const (
		admin = "/emulator/v1/projects/demo-loupe/databases/(default)"
		doc   = "/v1/projects/demo-loupe/databases/(default)/documents/notes/a"
	)
	owner := h.AdminToken()
	restore := `{"documents": [{"name": "projects/demo-loupe/databases/(default)/documents/notes/a",
		"fields": {"text": {"stringValue": "old"}}, "createTime": "2024-01-02T03:04:05Z", "updateTime": "2024-02-03T04:05:06Z"}]}`
	h.Run(t, []inproc.Step{
		{Name: "restore", Path: admin + "/documents:restore", Bearer: owner, Body: restore, Status: 200, Contains: []string{`"changed":1`}},
		{Name: "restored times kept", Method: "GET", Path: doc, Bearer: owner, Status: 200,
			Contains: []string{`"stringValue":"old"`, `"createTime":"2024-01-02T03:04:05Z"`, `"updateTime":"2024-02-03T04:05:06Z"`}},
		{Name: "restore of a bad document", Path: admin + "/documents:restore", Bearer: owner, Body: `{"documents": [{"fields": 5}]}`,
			Status: 400, Contains: []string{"documents[0]"}},
		{Name: "restore of a body that is not JSON", Path: admin + "/documents:restore", Bearer: owner, Body: `{"documents": [`,
			Status: 400, Contains: []string{"Invalid JSON payload"}},
		{Name: "a query that needs a composite index", Path: "/v1/projects/demo-loupe/databases/(default)/documents:runQuery", Bearer: owner,
			Body: `{"structuredQuery": {"from": [{"collectionId": "notes"}], "where": {"fieldFilter": {"field": {"fieldPath": "text"}, "op": "EQUAL",
				"value": {"stringValue": "old"}}}, "orderBy": [{"field": {"fieldPath": "n"}, "direction": "DESCENDING"}]}}`, Status: 200},
		{Name: "indexes report the missing one", Method: "GET", Path: admin + "/indexes", Bearer: owner, Status: 200,
			Contains: []string{`"declared":[]`, `"missing":[{`, `"collectionGroup":"notes"`}},
		{Name: "clear", Method: "DELETE", Path: admin + "/documents", Bearer: owner, Status: 200},
		{Name: "cleared", Method: "GET", Path: doc, Bearer: owner, Status: 404},
	})
}

// TestPullCheckpoints: a restore that carries a pull's checkpoint saves it
// once its documents are stored (and not when they are refused); GET reads
// it back, DELETE and clearing the database drop it, and a bad pull id or
// state is refused.
func TestPullCheckpoints(t *testing.T) {
	h := inproc.Start(t, inproc.Options{Only: []string{"firestore"}})
	const admin = "/emulator/v1/projects/demo-loupe/databases/(default)"
	owner := h.AdminToken()
	doc := `{"name": "projects/demo-loupe/databases/(default)/documents/notes/a", "fields": {}, "createTime": "2024-01-02T03:04:05Z", "updateTime": "2024-01-02T03:04:05Z"}`
	h.Run(t, []inproc.Step{
		{Name: "none yet", Method: "GET", Path: admin + "/pulls/p1", Bearer: owner, Status: 404},
		{Name: "refused documents save nothing", Path: admin + "/documents:restore", Bearer: owner,
			Body: `{"documents": [{"name": "elsewhere"}], "checkpoint": {"pull": "p1", "state": {"at": 1}}}`, Status: 400},
		{Name: "still none", Method: "GET", Path: admin + "/pulls/p1", Bearer: owner, Status: 404},
		{Name: "restore with a checkpoint", Path: admin + "/documents:restore", Bearer: owner,
			Body: `{"documents": [` + doc + `], "checkpoint": {"pull": "p1", "state": {"at": 1}}}`, Status: 200, Contains: []string{`"changed":1`}},
		{Name: "read back", Method: "GET", Path: admin + "/pulls/p1", Bearer: owner, Status: 200, Contains: []string{`{"at": 1}`}},
		{Name: "another database has none", Method: "GET", Path: "/emulator/v1/projects/demo-loupe/databases/other/pulls/p1", Bearer: owner, Status: 404},
		{Name: "a bad pull id", Path: admin + "/documents:restore", Bearer: owner,
			Body: `{"documents": [], "checkpoint": {"pull": "../x", "state": 1}}`, Status: 400, Contains: []string{"checkpoint.pull"}},
		{Name: "no state", Path: admin + "/documents:restore", Bearer: owner,
			Body: `{"documents": [], "checkpoint": {"pull": "p1"}}`, Status: 400, Contains: []string{"checkpoint.state"}},
		{Name: "a bad id to read", Method: "GET", Path: admin + "/pulls/a.b", Bearer: owner, Status: 400},
		{Name: "forget", Method: "DELETE", Path: admin + "/pulls/p1", Bearer: owner, Status: 200},
		{Name: "forgotten", Method: "GET", Path: admin + "/pulls/p1", Bearer: owner, Status: 404},
		{Name: "saved again", Path: admin + "/documents:restore", Bearer: owner,
			Body: `{"documents": [], "checkpoint": {"pull": "p2", "state": {"at": 2}}}`, Status: 200},
		{Name: "clear", Method: "DELETE", Path: admin + "/documents", Bearer: owner, Status: 200},
		{Name: "cleared with the documents", Method: "GET", Path: admin + "/pulls/p2", Bearer: owner, Status: 404},
	})
}

// TestPullCheckpoints_InTheDataDir: a checkpoint is kept in the data dir,
// so a loupe restarted on it still has it.
func TestPullCheckpoints_InTheDataDir(t *testing.T) {
	dir := t.TempDir()
	url := "/emulator/v1/projects/demo-loupe/databases/(default)/pulls/p1"
	first := loupetest.Start(t, loupetest.Options{DataDir: dir})
	if c, out := loupetest.Post(t, first.URL+"/emulator/v1/projects/demo-loupe/databases/(default)/documents:restore", "owner",
		map[string]any{"documents": []any{}, "checkpoint": map[string]any{"pull": "p1", "state": map[string]any{"at": 1}}}); c != 200 {
		t.Fatalf("restore: %d %v", c, out)
	}
	first.Stop(t)
	again := loupetest.Start(t, loupetest.Options{DataDir: dir})
	if c, out := loupetest.Call(t, "GET", again.URL+url, ""); c != 200 || out["at"] != float64(1) {
		t.Fatalf("after a restart: %d %v", c, out)
	}
}
