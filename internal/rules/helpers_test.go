package rules

import (
	"testing"
	"time"
)

const db = "/databases/(default)/documents/"

func w2(body string) string {
	return "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n" + body + "\n  }\n}\n"
}

func w1(body string) string {
	return "service cloud.firestore {\n  match /databases/{database}/documents {\n" + body + "\n  }\n}\n"
}

func s2(body string) string {
	return "rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o {\n" + body + "\n  }\n}\n"
}

// memDocs is an in-memory Documents: before is the stored state, after the state after the request.
type memDocs struct{ before, after map[string]map[string]any }

func (m memDocs) Get(p string) (map[string]any, bool, error) {
	d, ok := m.before[p]
	return d, ok, nil
}

func (m memDocs) GetAfter(p string) (map[string]any, bool, error) {
	if m.after == nil {
		return m.Get(p)
	}
	d, ok := m.after[p]
	return d, ok, nil
}

var testTime = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func user(uid string) *Auth {
	return &Auth{UID: uid, Token: map[string]any{"sub": uid, "user_id": uid}}
}

func i64(v int64) *int64 { return &v }

func mustCompile(t testing.TB, src string) *Ruleset {
	t.Helper()
	rs, err := Compile(src, "test.rules")
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return rs
}

// fsReq builds a Firestore request on a document path relative to the default database.
func fsReq(m Method, rel string, auth *Auth, resource, reqResource map[string]any) *Request {
	return &Request{Service: Firestore, Method: m, Path: db + rel, Auth: auth, Resource: resource,
		RequestResource: reqResource, Time: testTime}
}
