package rules

import (
	"strings"
	"testing"
	"time"
)

func w(version, body string) string {
	v := ""
	if version == "2" {
		v = "rules_version = '2';\n"
	}
	return v + "service cloud.firestore {\n  match /databases/{database}/documents {\n    " + body + "\n  }\n}\n"
}

func w2(body string) string { return w("2", body) }

func s2(body string) string {
	return "rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o {\n    " + body + "\n  }\n}\n"
}

// store is the documents a case reads with get() and getAfter(), by rules path.
type store struct{ before, after map[string]map[string]Value }

func (s store) Get(p string) (map[string]Value, bool, error) {
	d, ok := s.before[p]
	return resourceOf(p, d), ok, nil
}

func (s store) GetAfter(p string) (map[string]Value, bool, error) {
	if d, ok := s.after[p]; ok {
		return resourceOf(p, d), true, nil
	}
	return s.Get(p)
}

const root = "/databases/(default)/documents/"

func resourceOf(path string, data map[string]Value) map[string]Value {
	if data == nil {
		return nil
	}
	return map[string]Value{"data": data, "id": path[strings.LastIndex(path, "/")+1:], "__name__": Path(path)}
}

func alice() map[string]Value { return map[string]Value{"uid": "alice", "token": map[string]Value{}} }

var now = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

// TestRuleset_Evaluate runs the conformance cases of docs/rules.md §7 that
// the engine decides alone (without a Firestore query planner).
func TestRuleset_Evaluate(t *testing.T) {
	for _, tc := range []struct {
		name, rules string
		req         Request
		docs        store
		storage     bool
		allow       bool
		message     string
	}{
		{name: "T01 any matching allow grants", rules: w2(`match /cities/{c} { allow read: if false; } match /cities/{d=**} { allow read: if true; }`),
			req: Request{Method: "get", Path: root + "cities/SF"}, allow: true},
		{name: "T02 no cascading", rules: w2(`match /cities/{c} { allow read: if true; }`),
			req: Request{Method: "get", Path: root + "cities/SF/landmarks/L1"}, message: "No matching allow statements"},
		{name: "T03 v2 ** matches zero segments", rules: w2(`match /cities/{c}/{rest=**} { allow read: if true; }`),
			req: Request{Method: "get", Path: root + "cities/SF"}, allow: true},
		{name: "T04 v1 ** needs a segment", rules: w("1", `match /cities/{c}/{rest=**} { allow read: if true; }`),
			req: Request{Method: "get", Path: root + "cities/SF"}},
		{name: "T07 get does not cover list", rules: w2(`match /c/{id} { allow get: if true; }`),
			req: Request{Method: "list", Path: root + "c/x"}},
		{name: "T10 resource null is an error", rules: w2(`match /c/{id} { allow update: if resource.data.owner == request.auth.uid; }`),
			req: Request{Method: "update", Path: root + "c/missing", Auth: alice()}, message: "\nNull value error. for 'update' @ L4"},
		{name: "T11 signed out auth is null", rules: w2(`match /u/{uid} { allow read: if request.auth.uid == uid; }`),
			req: Request{Method: "get", Path: root + "u/alice"}, message: "\nNull value error. for 'get' @ L4"},
		{name: "T12 missing field is an error, not null", rules: w2(`match /c/{id} { allow create: if request.resource.data.nick == null; }`),
			req:     Request{Method: "create", Path: root + "c/x", RequestResource: map[string]Value{"data": map[string]Value{"name": "a"}}},
			message: "\nProperty nick is undefined on object. for 'create' @ L4"},
		{name: "T13 absence checks", rules: w2(`match /c/{id} { allow create: if !('nick' in request.resource.data) && request.resource.data.get('tags', []) is list && request.resource.data.get(['meta','v'], 0) == 0; }`),
			req: Request{Method: "create", Path: root + "c/x", RequestResource: map[string]Value{"data": map[string]Value{"name": "a"}}}, allow: true},
		{name: "T14 error || true", rules: w2(`match /c/{id} { allow get: if resource.data.nope == 1 || true; }`),
			req: Request{Method: "get", Path: root + "c/x", Resource: resourceOf(root+"c/x", map[string]Value{"a": int64(1)})}, allow: true},
		{name: "T15 error && false is false", rules: w2(`match /c/{id} { allow get: if !(resource.data.nope == 1 && false); }`),
			req: Request{Method: "get", Path: root + "c/x", Resource: resourceOf(root+"c/x", map[string]Value{"a": int64(1)})}, allow: true},
		{name: "T16 error survives !", rules: w2(`match /c/{id} { allow get: if !(resource.data.nope == 1); }`),
			req: Request{Method: "get", Path: root + "c/x", Resource: resourceOf(root+"c/x", map[string]Value{"a": int64(1)})}},
		{name: "T17 non-boolean grants nothing", rules: w2(`match /c/{id} { allow get: if resource.data.flag; }`),
			req: Request{Method: "get", Path: root + "c/x", Resource: resourceOf(root+"c/x", map[string]Value{"flag": int64(1)})}},
		{name: "T18 numbers", rules: w2(`match /c/{id} { allow create: if 7 / 2 == 3 && -7 / 2 == -3 && -7 % 2 == -1 && 7 / 2.0 == 3.5 && 1 == 1.0 && 1 is int && !(1 is float) && 1.0 is float && 1 is number; }`),
			req: Request{Method: "create", Path: root + "c/x"}, allow: true},
		{name: "T19 divide by zero", rules: w2(`match /c/{id} { allow create: if 1 / 0 == 0; }`),
			req: Request{Method: "create", Path: root + "c/x"}, message: "\nDivide by zero error. for 'create' @ L4"},
		{name: "T20 matches is whole-string", rules: w2(`match /c/{id} { allow create: if 'hello world'.matches('world'); }`),
			req: Request{Method: "create", Path: root + "c/x"}},
		{name: "T21 string helpers", rules: w2(`match /c/{id} { allow create: if 'a.b.c'.split('\\.') == ['a','b','c'] && 'banana'.replace('a','o') == 'bonono' && ['x','y'].join('-') == 'x-y' && 'AbC'.lower() == 'abc' && ' x '.trim() == 'x' && 'hello world'.matches('.*world') && 'abc'[1:3] == 'bc' && 'abc'[0:1] == 'a' && 'abc'.size() == 3; }`),
			req: Request{Method: "create", Path: root + "c/x"}, allow: true},
		{name: "T22 no slice clamping", rules: w2(`match /c/{id} { allow create: if 'abc'[0:10] == 'abc'; }`),
			req: Request{Method: "create", Path: root + "c/x"}},
		{name: "T23 hasOnly rejects extra fields", rules: w2(`match /c/{id} { allow create: if request.resource.data.keys().hasAll(['name']) && request.resource.data.keys().hasOnly(['name','age']); }`),
			req: Request{Method: "create", Path: root + "c/x", RequestResource: map[string]Value{"data": map[string]Value{"name": "a", "admin": true}}}},
		{name: "T24 diff affectedKeys", rules: w2(`match /d/{id} { allow update: if request.resource.data.diff(resource.data).affectedKeys().hasOnly(['title']); }`),
			req: Request{Method: "update", Path: root + "d/x", Resource: resourceOf(root+"d/x", map[string]Value{"title": "a", "owner": "alice"}),
				RequestResource: map[string]Value{"data": map[string]Value{"title": "b", "owner": "alice"}}}, allow: true},
		{name: "T25 owner in affectedKeys", rules: w2(`match /d/{id} { allow update: if request.resource.data.diff(resource.data).affectedKeys().hasOnly(['title']); }`),
			req: Request{Method: "update", Path: root + "d/x", Resource: resourceOf(root+"d/x", map[string]Value{"title": "a", "owner": "alice"}),
				RequestResource: map[string]Value{"data": map[string]Value{"title": "a", "owner": "bob"}}}},
		{name: "T26 removedKeys", rules: w2(`match /d/{id} { allow update: if !request.resource.data.diff(resource.data).removedKeys().hasAny(['owner']); }`),
			req: Request{Method: "update", Path: root + "d/x", Resource: resourceOf(root+"d/x", map[string]Value{"title": "a", "owner": "alice"}),
				RequestResource: map[string]Value{"data": map[string]Value{"title": "a"}}}},
		{name: "T27 keys() is a list without difference", rules: w2(`match /c/{id} { allow create: if request.resource.data.keys().difference(['a'].toSet()).size() == 1; }`),
			req: Request{Method: "create", Path: root + "c/x", RequestResource: map[string]Value{"data": map[string]Value{"a": int64(1), "b": int64(2)}}}},
		{name: "T28 server timestamp is request.time", rules: w2(`match /c/{id} { allow create: if request.resource.data.at == request.time; }`),
			req: Request{Method: "create", Path: root + "c/x", Time: now, RequestResource: map[string]Value{"data": map[string]Value{"at": now}}}, allow: true},
		{name: "T29 get of a missing doc is null", rules: w2(`match /p/{id} { allow get: if get(/databases/$(database)/documents/users/$(request.auth.uid)).data.admin == true; }`),
			req: Request{Method: "get", Path: root + "p/1", Auth: alice()}},
		{name: "T30 short-circuit guard", rules: w2(`match /p/{id} { allow get: if !exists(/databases/$(database)/documents/users/$(request.auth.uid)) || get(/databases/$(database)/documents/users/$(request.auth.uid)).data.admin == true; }`),
			req: Request{Method: "get", Path: root + "p/1", Auth: alice()}, allow: true},
		{name: "T31 getAfter sees the batch", rules: w2(`match /posts/{p} { allow create: if getAfter(/databases/$(database)/documents/counters/$(p)).data.n == 1; }`),
			req:  Request{Method: "create", Path: root + "posts/p1", Auth: alice()},
			docs: store{after: map[string]map[string]Value{root + "counters/p1": {"n": int64(1)}}}, allow: true},
		{name: "T32 query pins the field", rules: w2(`match /stories/{s} { allow list: if request.auth != null && resource.data.author == request.auth.uid; }`),
			req: Request{Method: "list", Path: root + "stories/s", Auth: alice(), Resource: map[string]Value{"data": map[string]Value{"author": "alice"}}}, allow: true},
		{name: "T33 unfiltered query is not provable", rules: w2(`match /stories/{s} { allow list: if request.auth != null && resource.data.author == request.auth.uid; }`),
			req:     Request{Method: "list", Path: root + "stories/s", Auth: alice(), Resource: map[string]Value{"data": map[string]Value{}}},
			message: "\nProperty author is undefined on object. for 'list' @ L4"},
		{name: "T35 query limit", rules: w2(`match /m/{id} { allow list: if request.query.limit <= 10; }`),
			req: Request{Method: "list", Path: root + "m/x", Query: map[string]Value{"limit": int64(20)}}},
		{name: "T36 paths", rules: w2(`match /cities/{city} { allow get: if request.path == /databases/$(database)/documents/cities/$(city) && resource.__name__ == request.path && resource.id == city && request.path[4] == city; }`),
			req: Request{Method: "get", Path: root + "cities/SF", Resource: resourceOf(root+"cities/SF", map[string]Value{})}, allow: true},
		{name: "T37 functions, let, ternary", rules: w2(`function canEdit(d) { let isOwner = d.owner == request.auth.uid; return isOwner ? true : request.auth.uid in d.get('editors', []); } match /docs/{id} { allow update: if canEdit(resource.data); }`),
			req: Request{Method: "update", Path: root + "docs/d1", Auth: alice(), Resource: resourceOf(root+"docs/d1", map[string]Value{"owner": "bob", "editors": []Value{"alice"}})}, allow: true},
		{name: "T38 storage size and type", storage: true, rules: s2(`match /images/{id} { allow create: if request.resource.size < 1024 && request.resource.contentType.matches('image/.*'); }`),
			req: Request{Method: "create", Path: "/b/bkt/o/images/a.png", Auth: alice(), RequestResource: map[string]Value{"size": int64(2048), "contentType": "image/png"}}},
		{name: "T38b within the size", storage: true, rules: s2(`match /images/{id} { allow create: if request.resource.size < 1024 && request.resource.contentType.matches('image/.*'); }`),
			req: Request{Method: "create", Path: "/b/bkt/o/images/a.png", Auth: alice(), RequestResource: map[string]Value{"size": int64(500), "contentType": "image/png"}}, allow: true},
		{name: "sets", rules: w2(`match /c/{id} { allow create: if ['a','b'].toSet().difference(['a','c'].toSet()) == ['b'].toSet() && ['a','a'].toSet().size() == 1; }`),
			req: Request{Method: "create", Path: root + "c/x"}, allow: true},
		{name: "read budget", rules: w2(`match /c/{id} { allow get: if exists(/databases/$(database)/documents/a/1) || exists(/databases/$(database)/documents/a/2) || exists(/databases/$(database)/documents/a/3); }`),
			req: Request{Method: "get", Path: root + "c/x", MaxReads: 2}, message: "\nMaximum number of document reads (2) exceeded. for 'get' @ L4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := Parse("test.rules", tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			service := "cloud.firestore"
			if tc.storage {
				service = "firebase.storage"
			}
			got := rs.Evaluate(service, &tc.req, tc.docs)
			if got.Allow != tc.allow || (tc.message != "" && got.Message != tc.message) {
				t.Errorf("got %+v, want allow=%v message=%q", got, tc.allow, tc.message)
			}
		})
	}
}

func TestParse_Errors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"service cloud.firestore {\n  match /a/{b} {\n    allow read: if ;\n  }\n}", "test.rules:3:20: expected an expression, found \";\""},
		{"service cloud.firestore {\n  match /a/{b} {\n    allow reed: if true;\n  }\n}", "test.rules:3:11: unknown method \"reed\""},
		{"service cloud.firestore {\n  match /a/{b=**}/c {\n  }\n}", "test.rules:2:3: a {name=**} wildcard must be the last segment"},
		{"service cloud.other { }", "test.rules:1:9: unknown service \"cloud.other\" (cloud.firestore or firebase.storage)"},
		{"rules_version = '3';", "test.rules:1:17: unsupported rules_version \"3\""},
		{"service cloud.firestore {\n  match /a {\n    allow read: if 'open;\n  }\n}", "test.rules:3:20: unterminated string"},
		{"", "test.rules:1:1: a rules file needs a service block"},
	} {
		_, err := Parse("test.rules", tc.src)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q) error = %v, want %s", tc.src, err, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{w2(`match /c/{id} { allow read: if request.auth.uid == id && get(/databases/$(database)/documents/u/$(id)).data.x in [1, 2.5, 'a']; }`),
		s2(`match /{all=**} { allow write: if request.resource.size < 5 * 1024 * 1024; }`), "service", "match /a/$(", "'\\x4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		rs, err := Parse("fuzz.rules", src)
		if err == nil {
			rs.Evaluate("cloud.firestore", &Request{Method: "get", Path: root + "c/x"}, store{})
		}
	})
}
