package inproc_test

import (
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/loupe-dev/loupe/internal/loupetest/inproc"
)

const (
	idt    = "/identitytoolkit.googleapis.com/v1/accounts:"
	docs   = "/v1/projects/demo-loupe/databases/(default)/documents"
	doc    = "projects/demo-loupe/databases/(default)/documents/notes/n1"
	bucket = "/v0/b/demo-loupe.appspot.com/o"
)

// TestScenario_EachTransportWordsTheErrorKinds drives Auth, Firestore REST
// and both Storage APIs through one app: what succeeds answers the
// service's resource, and the same error kinds (already exists, not found,
// invalid argument) reach each client in its own service's shape.
func TestScenario_EachTransportWordsTheErrorKinds(t *testing.T) {
	h := inproc.Start(t, inproc.Options{})
	h.Run(t, []inproc.Step{
		{Name: "sign-up", Path: idt + "signUp?key=k", Body: `{"email":"a@b.co","password":"secret1","returnSecureToken":true}`,
			Status: 200, Contains: []string{`"idToken":"`, `"email":"a@b.co"`}},
		{Name: "sign-up again: EMAIL_EXISTS", Path: idt + "signUp?key=k", Body: `{"email":"a@b.co","password":"secret1"}`,
			Status: 400, Contains: []string{`"message":"EMAIL_EXISTS"`, `"reason":"invalid"`}},
		{Name: "sign-up with a weak password", Path: idt + "signUp?key=k", Body: `{"email":"c@b.co","password":"x"}`,
			Status: 400, Contains: []string{`"message":"WEAK_PASSWORD : Password should be at least 6 characters"`}},
		{Name: "auth batchCreate with users not a list: a payload error carries its status", Path: "/identitytoolkit.googleapis.com/v1/projects/demo-loupe/accounts:batchCreate",
			Bearer: "owner", Body: `{"users":7}`, Status: 400, Contains: []string{`"status":"INVALID_ARGUMENT"`}},
		{Name: "unknown auth method", Path: idt + "frobnicate", Body: `{}`,
			Status: 404, Contains: []string{`"status":"NOT_FOUND"`, `"reason":"notFound"`}},
		{Name: "firestore commit", Path: docs + ":commit", Bearer: "owner",
			Body:   `{"writes":[{"update":{"name":"` + doc + `","fields":{"title":{"stringValue":"hi"}}}}]}`,
			Status: 200, Contains: []string{`"commitTime":"`}},
		{Name: "firestore get", Method: "GET", Path: docs + "/notes/n1", Bearer: "owner",
			Status: 200, Contains: []string{`"title":{"stringValue":"hi"}`}},
		{Name: "firestore create of an existing document", Path: docs + ":commit", Bearer: "owner",
			Body:   `{"writes":[{"update":{"name":"` + doc + `","fields":{}},"currentDocument":{"exists":false}}]}`,
			Status: 409, Contains: []string{`"status":"ALREADY_EXISTS"`, `"code":409`}},
		{Name: "firestore get of a missing document", Method: "GET", Path: docs + "/notes/none", Bearer: "owner",
			Status: 404, Contains: []string{`"status":"NOT_FOUND"`, `"code":404`}},
		{Name: "storage upload", Path: bucket + "?name=a.txt", ContentType: "text/plain", Bearer: "owner", Body: "hello",
			Status: 200, Contains: []string{`"name":"a.txt"`, `"size":"5"`}},
		{Name: "storage download", Method: "GET", Path: bucket + "/a.txt?alt=media", Bearer: "owner",
			Status: 200, Contains: []string{"hello"}},
		{Name: "storage get of a missing object", Method: "GET", Path: bucket + "/none.txt", Bearer: "owner",
			Status: 404, Contains: []string{`{"error":{"code":404,"message":"Not Found.  Could not get object"}}`}},
		{Name: "storage upload with an invalid name", Path: bucket + "?name=a%2F..%2Fb", ContentType: "text/plain", Bearer: "owner", Body: "x",
			Status: 400, Contains: []string{`"message":"Invalid object name."`}},
		{Name: "GCS get of a missing object", Method: "GET", Path: "/storage/v1/b/demo-loupe.appspot.com/o/none.txt", Bearer: "owner",
			Status: 404, Contains: []string{`"reason":"notFound"`}},
	})
}

// TestScenario_RulesDenyInEachShape runs the repository's rules: a write
// they refuse is PERMISSION_DENIED over Firestore REST and a 403 with the
// emulator's message over Storage's Firebase API.
func TestScenario_RulesDenyInEachShape(t *testing.T) {
	h := inproc.Start(t, inproc.Options{Config: loupetest.Rules(t, loupetest.RepoFile("firestore.rules"), loupetest.RepoFile("storage.rules"))})
	h.Run(t, []inproc.Step{
		{Name: "firestore write without a user", Path: docs + ":commit",
			Body:   `{"writes":[{"update":{"name":"projects/demo-loupe/databases/(default)/documents/users/bob","fields":{}}}]}`,
			Status: 403, Contains: []string{`"status":"PERMISSION_DENIED"`, `"code":403`}},
		{Name: "storage upload without a user", Path: bucket + "?name=avatars%2Fbob%2Fa.png", ContentType: "image/png", Body: "PNG",
			Status: 403, Contains: []string{`{"error":{"code":403,"message":"Permission denied. No WRITE permission."}}`}},
	})
}
