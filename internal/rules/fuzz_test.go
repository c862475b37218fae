package rules

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzCompile checks that any input either compiles or yields a positioned *ParseError, never a panic,
// that compiled rulesets evaluate (traced too) without panicking, and that every expression's source
// range lies inside the source and the coverage report renders.
func FuzzCompile(f *testing.F) {
	f.Add(w2(`match /c/{id} { allow read: if request.auth != null && get(/databases/$(database)/documents/u/$(request.auth.uid)).data.admin == true; }`))
	f.Add(s2(`match /users/{uid}/{file=**} { allow write: if request.resource.size < 5 * 1024 * 1024 && request.resource.contentType.matches('image/.*'); }`))
	f.Add(w2(`function f(a) { let b = a[1:2]; return b in ['x'] ? true : {'k': [1, 2.5, b'\x00']}.get(['k'], null) is list; } match /{p=**}/x/{d} { allow list: if f('abc'); }`))
	f.Add("rules_version = '2';\nservice cloud.firestore {\n  match /a/{b} {\n    asd232w\n  }\n}")
	f.Add("service cloud.firestore { match /a/{b} { allow read: if 'a\\d'")
	f.Fuzz(func(t *testing.T, src string) {
		rs, err := Compile(src, "fuzz.rules")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Col < 1 {
				t.Fatalf("bad error %v", err)
			}
			_ = err.Error()
			return
		}
		for _, m := range []Method{Get, List, Create, Update, Delete} {
			rs.Evaluate(&Request{Service: rs.Service, Method: m, Path: db + "c/x", Auth: user("alice"),
				Resource: map[string]any{"a": int64(1)}, RequestResource: map[string]any{"a": int64(2)},
				Documents: memDocs{}})
			rs.EvaluateTrace(&Request{Service: rs.Service, Method: m, Path: "/b/bkt/o/users/alice/x.png"})
		}
		for n, sp := range rs.spans {
			if sp.start < 0 || sp.start > sp.end || sp.end > len(src) {
				t.Fatalf("expression at %d has range %+v outside the %d-byte source", n.at(), sp, len(src))
			}
		}
		if _, err := json.Marshal(rs.Coverage()); err != nil {
			t.Fatalf("coverage report: %v", err)
		}
	})
}
