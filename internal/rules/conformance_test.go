package rules

import (
	"strings"
	"testing"
)

// TestRuleset_Evaluate_Conformance runs the conformance table at engine
// level: each case is a ruleset, a request and the decision Firebase's
// rules engine gives it (the official emulator's, where production cannot
// be reached).
func TestRuleset_Evaluate_Conformance(t *testing.T) {
	alice, bob := user("alice"), user("bob")
	seed := memDocs{before: map[string]map[string]any{}}
	t31 := memDocs{before: map[string]map[string]any{}, after: map[string]map[string]any{
		db + "counters/p1": {"n": int64(1)}, db + "posts/p1": {"t": int64(1)}}}
	listReq := func(coll string, auth *Auth, q *Query) *Request {
		r := fsReq(List, coll, auth, nil, nil)
		r.Query = q
		return r
	}
	group := func(id string) *Request {
		return &Request{Service: Firestore, Method: List, Path: strings.TrimSuffix(db, "/"), Query: &Query{CollectionGroup: id}, Time: testTime}
	}
	withDocs := func(r *Request, d Documents) *Request { r.Documents = d; return r }
	d24 := map[string]any{"title": "a", "owner": "alice"}
	tests := []struct {
		name  string
		rules string
		req   *Request
		allow bool
		msg   string // substring of the denial message
	}{
		{"T01 any matching allow grants", w2(`match /cities/{c} { allow read: if false; } match /cities/{d=**} { allow read: if true; }`),
			fsReq(Get, "cities/SF", nil, map[string]any{}, nil), true, ""},
		{"T02 no cascading", w2(`match /cities/{c} { allow read: if true; }`),
			fsReq(Get, "cities/SF/landmarks/L1", nil, map[string]any{}, nil), false, "No matching allow statements"},
		{"T03 v2 ** matches zero segments", w2(`match /cities/{c}/{rest=**} { allow read: if true; }`),
			fsReq(Get, "cities/SF", nil, map[string]any{}, nil), true, ""},
		{"T04 v1 ** needs one segment", w1(`match /cities/{c}/{rest=**} { allow read: if true; }`),
			fsReq(Get, "cities/SF", nil, map[string]any{}, nil), false, "No matching"},
		{"T05 specific path cannot authorize group query", w2(`match /forums/{f}/posts/{p} { allow read: if true; }`),
			group("posts"), false, "No matching"},
		{"T06 recursive prefix group rule", w2(`match /{path=**}/posts/{p} { allow read: if true; }`),
			group("posts"), true, ""},
		{"T07 get does not cover list", w2(`match /c/{id} { allow get: if true; }`),
			listReq("c", nil, nil), false, "No matching"},
		{"T08 write to existing is update", w2(`match /c/{id} { allow create: if true; }`),
			fsReq(Update, "c/x", alice, map[string]any{"a": 1}, map[string]any{"a": 2}), false, "No matching"},
		{"T09 merge-set on missing is create", w2(`match /c/{id} { allow create: if true; allow update: if false; }`),
			fsReq(Create, "c/new", alice, nil, map[string]any{"a": 1}), true, ""},
		{"T10 update of missing doc: resource null", w2(`match /c/{id} { allow update: if resource.data.owner == request.auth.uid; }`),
			fsReq(Update, "c/missing", alice, nil, map[string]any{"a": 1}), false, "Null value error. for 'update' @ L4"},
		{"T11 null auth", w2(`match /u/{uid} { allow read: if request.auth.uid == uid; }`),
			fsReq(Get, "u/alice", nil, map[string]any{}, nil), false, "Null value error."},
		{"T12 missing field is an error", w2(`match /c/{id} { allow create: if request.resource.data.nick == null; }`),
			fsReq(Create, "c/x", alice, nil, map[string]any{"name": "a"}), false, "Property nick is undefined on object."},
		{"T13 absence checks", w2(`match /c/{id} { allow create: if !('nick' in request.resource.data) && request.resource.data.get('tags', []) is list && request.resource.data.get(['meta','v'], 0) == 0; }`),
			fsReq(Create, "c/x", alice, nil, map[string]any{"name": "a"}), true, ""},
		{"T14 error || true", w2(`match /c/{id} { allow get: if resource.data.nope == 1 || true; }`),
			fsReq(Get, "c/x", nil, map[string]any{"a": 1}, nil), true, ""},
		{"T15 error && false", w2(`match /c/{id} { allow get: if !(resource.data.nope == 1 && false); }`),
			fsReq(Get, "c/x", nil, map[string]any{"a": 1}, nil), true, ""},
		{"T16 error survives !", w2(`match /c/{id} { allow get: if !(resource.data.nope == 1); }`),
			fsReq(Get, "c/x", nil, map[string]any{"a": 1}, nil), false, "Property nope is undefined on object. for 'get' @ L4"},
		{"T17 non-boolean grants nothing", w2(`match /c/{id} { allow get: if resource.data.flag; }`),
			fsReq(Get, "c/x", nil, map[string]any{"flag": 1}, nil), false, "false for 'get' @ L4"},
		{"T18 numbers", w2(`match /c/{id} { allow create: if 7 / 2 == 3 && -7 / 2 == -3 && -7 % 2 == -1 && 7 / 2.0 == 3.5 && 1 == 1.0 && 1 is int && !(1 is float) && 1.0 is float && 1 is number; }`),
			fsReq(Create, "c/x", alice, nil, map[string]any{}), true, ""},
		{"T19 divide by zero", w2(`match /c/{id} { allow create: if 1 / 0 == 0; }`),
			fsReq(Create, "c/x", alice, nil, map[string]any{}), false, "Divide by zero error."},
		{"T20 matches is whole-string", w2(`match /c/{id} { allow create: if 'hello world'.matches('world'); }`),
			fsReq(Create, "c/x", alice, nil, map[string]any{}), false, "false for 'create'"},
		{"T21 string helpers", w2(`match /c/{id} { allow create: if 'a.b.c'.split('\\.') == ['a','b','c'] && 'banana'.replace('a','o') == 'bonono' && ['x','y'].join('-') == 'x-y' && 'AbC'.lower() == 'abc' && ' x '.trim() == 'x' && 'hello world'.matches('.*world') && 'abc'[1:3] == 'bc' && 'abc'[0] == 'a' && 'abc'.size() == 3; }`),
			fsReq(Create, "c/x", alice, nil, map[string]any{}), true, ""},
		{"T22 slice out of range", w2(`match /c/{id} { allow create: if 'abc'[0:10] == 'abc'; }`),
			fsReq(Create, "c/x", alice, nil, map[string]any{}), false, "Index out of bound error. Index: [10] , size: [3]."},
		{"T23 hasOnly rejects extra field", w2(`match /c/{id} { allow create: if request.resource.data.keys().hasAll(['name']) && request.resource.data.keys().hasOnly(['name','age']); }`),
			fsReq(Create, "c/x", alice, nil, map[string]any{"name": "a", "admin": true}), false, "false"},
		{"T24 diff affectedKeys", w2(`match /d/{id} { allow update: if request.resource.data.diff(resource.data).affectedKeys().hasOnly(['title']); }`),
			fsReq(Update, "d/x", alice, d24, map[string]any{"title": "b", "owner": "alice"}), true, ""},
		{"T25 diff catches owner change", w2(`match /d/{id} { allow update: if request.resource.data.diff(resource.data).affectedKeys().hasOnly(['title']); }`),
			fsReq(Update, "d/x", alice, d24, map[string]any{"title": "a", "owner": "bob"}), false, "false"},
		{"T26 removedKeys", w2(`match /d/{id} { allow update: if !request.resource.data.diff(resource.data).removedKeys().hasAny(['owner']); }`),
			fsReq(Update, "d/x", alice, d24, map[string]any{"title": "a"}), false, "false"},
		{"T27 list has no difference", w2(`match /c/{id} { allow create: if request.resource.data.keys().difference(['a'].toSet()).size() == 1; }`),
			fsReq(Create, "c/x", alice, nil, map[string]any{"a": 1, "b": 2}), false, "Function not found error: Name: [difference]."},
		{"T28 server timestamp equals request.time", w2(`match /c/{id} { allow create: if request.resource.data.at == request.time; }`),
			fsReq(Create, "c/x", alice, nil, map[string]any{"at": testTime}), true, ""},
		{"T29 get of missing doc is null", w2(`match /p/{id} { allow get: if get(/databases/$(database)/documents/users/$(request.auth.uid)).data.admin == true; }`),
			withDocs(fsReq(Get, "p/1", alice, map[string]any{}, nil), seed), false, "Null value error."},
		{"T30 exists guard short-circuits", w2(`match /p/{id} { allow get: if !exists(/databases/$(database)/documents/users/$(request.auth.uid)) || get(/databases/$(database)/documents/users/$(request.auth.uid)).data.admin == true; }`),
			withDocs(fsReq(Get, "p/1", alice, map[string]any{}, nil), seed), true, ""},
		{"T31 getAfter sees the batch", w2(`match /posts/{p} { allow create: if getAfter(/databases/$(database)/documents/counters/$(p)).data.n == 1; } match /counters/{c} { allow create: if true; }`),
			withDocs(fsReq(Create, "posts/p1", alice, nil, map[string]any{"t": 1}), t31), true, ""},
		{"T31b getAfter alone denies", w2(`match /posts/{p} { allow create: if getAfter(/databases/$(database)/documents/counters/$(p)).data.n == 1; }`),
			withDocs(fsReq(Create, "posts/p1", alice, nil, map[string]any{"t": 1}), seed), false, "Null value error."},
		{"T32 query pins author", w2(`match /stories/{s} { allow list: if request.auth != null && resource.data.author == request.auth.uid; }`),
			listReq("stories", alice, &Query{Filters: []Filter{{"author", "==", "alice"}}}), true, ""},
		{"T33 unfiltered query denied", w2(`match /stories/{s} { allow list: if request.auth != null && resource.data.author == request.auth.uid; }`),
			listReq("stories", alice, nil), false, "Property author is undefined on object. for 'list' @ L4"},
		{"T34 every in value must pass", w2(`match /m/{id} { allow list: if resource.data.x > 5; }`),
			listReq("m", nil, &Query{Filters: []Filter{{"x", "in", []any{int64(1), int64(6)}}}}), false, "false for 'list'"},
		{"T34b in values all pass", w2(`match /m/{id} { allow list: if resource.data.x > 5; }`),
			listReq("m", nil, &Query{Filters: []Filter{{"x", "in", []any{int64(6), int64(42)}}}}), true, ""},
		{"T35 query limit", w2(`match /m/{id} { allow list: if request.query.limit <= 10; }`),
			listReq("m", nil, &Query{Limit: i64(20)}), false, "false"},
		{"T36 path identity", w2(`match /cities/{city} { allow get: if request.path == /databases/$(database)/documents/cities/$(city) && resource.__name__ == request.path && resource.id == city && request.path[4] == city; }`),
			fsReq(Get, "cities/SF", nil, map[string]any{}, nil), true, ""},
		{"T37 function let ternary", w2(`function canEdit(d) { let isOwner = d.owner == request.auth.uid; return isOwner ? true : request.auth.uid in d.get('editors', []); } match /docs/{id} { allow update: if canEdit(resource.data); }`),
			fsReq(Update, "docs/d1", alice, map[string]any{"owner": "bob", "editors": []any{"alice"}}, map[string]any{"owner": "bob", "editors": []any{"alice"}, "x": 1}), true, ""},
		{"T38 storage size", s2(`match /images/{id} { allow create: if request.resource.size < 1024 && request.resource.contentType.matches('image/.*'); }`),
			&Request{Service: Storage, Method: Create, Path: "/b/bkt/o/images/a.png", Auth: alice, RequestResource: map[string]any{"size": int64(2048), "contentType": "image/png"}}, false, "false"},
		{"T38b storage size ok", s2(`match /images/{id} { allow create: if request.resource.size < 1024 && request.resource.contentType.matches('image/.*'); }`),
			&Request{Service: Storage, Method: Create, Path: "/b/bkt/o/images/a.png", Auth: alice, RequestResource: map[string]any{"size": int64(500), "contentType": "image/png"}}, true, ""},
		{"T39 storage overwrite is create with resource", s2(`match /files/{id} { allow read: if true; allow create: if resource == null; allow update: if true; }`),
			&Request{Service: Storage, Method: Create, Path: "/b/bkt/o/files/a", Auth: alice, Resource: map[string]any{"name": "files/a"}, RequestResource: map[string]any{"name": "files/a"}}, false, "false"},
		{"T40 storage list prefix + child", s2(`match /users/{uid}/{file} { allow list: if request.auth.uid == uid; }`),
			&Request{Service: Storage, Method: List, Path: "/b/bkt/o/users/alice", Auth: alice}, true, ""},
		{"T40b storage list by other user", s2(`match /users/{uid}/{file} { allow list: if request.auth.uid == uid; }`),
			&Request{Service: Storage, Method: List, Path: "/b/bkt/o/users/alice", Auth: bob}, false, "false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := mustCompile(t, tc.rules)
			d := rs.Evaluate(tc.req)
			if d.Allow != tc.allow {
				t.Fatalf("Allow = %v, want %v (message %q)", d.Allow, tc.allow, d.Message)
			}
			if !tc.allow && !strings.Contains(d.Message, tc.msg) {
				t.Fatalf("message %q does not contain %q", d.Message, tc.msg)
			}
		})
	}
}
