package emulator_test

import (
	"testing"

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
