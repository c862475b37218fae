package rules

import (
	"strings"
	"testing"
)

// evalExpr evaluates one expression as the condition of a create on c/x by alice.
func evalExpr(t *testing.T, expr string, docs Documents) Decision {
	t.Helper()
	rs := mustCompile(t, w2("match /c/{id} { allow create: if "+expr+"; }"))
	req := fsReq(Create, "c/x", user("alice"), nil, map[string]any{"a": int64(1)})
	req.Documents = docs
	return rs.Evaluate(req)
}

func TestRuleset_Evaluate_Expressions(t *testing.T) {
	trueExprs := []string{
		`['a','b'].toSet().difference(['a','c'].toSet()) == ['b'].toSet()`,
		`'hi'.toUtf8().toBase64() == 'aGk='`,
		`'~~~'.toUtf8().toBase64() == 'fn5-'`,
		`b'\x2A'.toHexString() == '2A'`,
		`hashing.sha256('abc').toHexString().lower() == 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'`,
		`hashing.crc32('123456789').toHexString() == '2639F4CB'`,
		`hashing.crc32c('123456789').toHexString() == '839206E3'`,
		`!('toString' in request.resource.data)`,
		`resource == null`,
		`string(true) == 'true' && string(1) == '1' && string(2.0) == '2.0' && string(null) == 'null'`,
		`int('2') == 2 && int(2.7) == 2 && float(2) == 2.0`,
		`math.abs(-3) == 3 && math.ceil(1.2) == 2 && math.floor(1.8) == 1 && math.round(2.5) == 3 && math.round(-2.5) == -2`,
		`math.sqrt(4) == 2.0 && math.pow(2, 10) == 1024.0 && math.isNaN(0.0 / 0.0)`,
		`{'a':{'b':1}}.get(['a','b'], 7) == 1 && {'a':1}.get(['a','b'], 7) == 7`,
		`{'b':2,'a':1}.keys() == ['a','b'] && {'b':2,'a':1}.values() == [1,2]`,
		`['a','a','b'].hasOnly(['a','b']) && [1,2,3].hasAny([3,4]) && [1,2,3].hasAll([1,3])`,
		`[1,2,3].removeAll([2]) == [1,3] && [1].concat([2]) == [1,2] && [1] + [2] == [1,2]`,
		`[1,2,3][1:] == [2,3] && [1,2,3][:1] == [1]`,
		`{'a':1,'b':2}.diff({'b':3,'c':4}).addedKeys() == ['a'].toSet()`,
		`{'a':1,'b':2}.diff({'b':3,'c':4}).removedKeys() == ['c'].toSet()`,
		`{'a':1,'b':2}.diff({'a':1,'b':3}).changedKeys() == ['b'].toSet() && {'a':1,'b':2}.diff({'a':1,'b':3}).unchangedKeys() == ['a'].toSet()`,
		`['a','b'].toSet().union(['c'].toSet()).size() == 3 && ['a','b'].toSet().intersection(['b'].toSet()) == ['b'].toSet()`,
		`timestamp.date(2026, 1, 5).dayOfWeek() == 1 && timestamp.date(2026, 2, 1).dayOfYear() == 32`,
		`timestamp.value(86400000).year() == 1970 && timestamp.value(86400000).day() == 2 && timestamp.value(1500).toMillis() == 1500`,
		`request.time + duration.value(1, 'h') > request.time && request.time - request.time == duration.value(0, 's')`,
		`duration.value(90, 'm').seconds() == 5400 && duration.time(1, 0, 0, 5).nanos() == 5 && duration.abs(duration.value(-1, 's')) == duration.value(1, 's')`,
		`request.time.hours() == 10 && request.time.date() == timestamp.date(2026, 11, 22)`,
		`latlng.value(10.0, 20.0).latitude() == 10.0 && latlng.value(0, 0).distance(latlng.value(0, 1)) > 111000.0`,
		`path('users/alice') == /users/alice && path('users/{uid}').bind({'uid':'alice'}) == path('users/alice')`,
		`/databases/$(database)/documents/c/$(id)[4] == 'x'`,
		`(true ? 1 : 2) == 1`,
		`(false ? 1 : true ? 2 : 3) == 2`,
		`!false in [true]`,
		`!(1 == 1 in [true])`,
		`1 + 2 * 3 == 7 && (1 + 2) * 3 == 9 && 10 - 2 - 3 == 5 && -2 * -2 == 4`,
		`'a' < 'b' && 1 < 1.5 && 2.0 >= 2 && b'a' < b'b'`,
		`null is null && [1] is list && {'a':1} is map && 'a' is string && b'a' is bytes && request.time is timestamp && /a/b is path`,
		`1 != '1' && [1, 2] == [1, 2.0] && {'a': [1]} == {'a': [1]}`,
		`"double" == 'double' && 'it\'s' == "it's" && '\u0041' == 'A' && '\101' == 'A'`,
		`debug(1) == 1`,
		`request.method == 'create' && request.path[3] == 'c'`,
		`(1 / 0 == 0) || true`,
	}
	for _, expr := range trueExprs {
		t.Run(expr, func(t *testing.T) {
			if d := evalExpr(t, expr, nil); !d.Allow {
				t.Fatalf("want allow, got %q", d.Message)
			}
		})
	}
	denied := []struct{ expr, msg string }{
		{`'abc'.size() == 'x'`, "false"},
		{`'a' < 1`, "Unsupported operation error."},
		{`'a' + 1 == 'a1'`, "Unsupported operation error."},
		{`'a' in 'abc'`, "Function not found error: Name: [in]."},
		{`1 in {'a':1}`, "Expected: map.in(string)."},
		{`{'a':1}.hasAll(['a'])`, "Function not found error: Name: [hasAll]."},
		{`path(/a/b) == /a/b`, "Received: path(path). Expected: path(string)."},
		{`duration.value(1, 'y') > duration.value(0, 's')`, "Invalid duration unit"},
		{`latlng.value(100.0, 0.0) == null`, "Latitude should be in [-90,90] range"},
		{`[1][3] == 1`, "Index out of bound error. Index: [3] , size: [1]."},
		{`1 ? true : true`, "Condition must be a bool"},
		{`1 && true`, "Logical operands must be bool"},
		{`undefinedFn(1)`, "Function not found error: Name: [undefinedFn]."},
		{`request.query.limit == 1`, "Property query is undefined on object."},
		{`'x'.matches('(')`, "Invalid regular expression"},
		{`9223372036854775807 + 1 > 0`, "Integer overflow error."},
		{`null.a == 1`, "Null value error."},
	}
	for _, tc := range denied {
		t.Run(tc.expr, func(t *testing.T) {
			rs, err := Compile(w2("match /c/{id} { allow create: if "+tc.expr+"; }"), "t.rules")
			if err != nil {
				if !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("compile error %v does not contain %q", err, tc.msg)
				}
				return
			}
			d := rs.Evaluate(fsReq(Create, "c/x", user("alice"), nil, map[string]any{"a": int64(1)}))
			if d.Allow || !strings.Contains(d.Message, tc.msg) {
				t.Fatalf("got allow=%v %q, want denial containing %q", d.Allow, d.Message, tc.msg)
			}
		})
	}
}

func TestRuleset_Evaluate_Functions(t *testing.T) {
	src := w2(`
    function outer() { return 3; }
    match /c/{id} {
      function usesVar() { let n = id.size(); return n == 1; }
      function lazy() { let unused = request.auth.token.missing; return true; }
      allow create: if outer() == 3 && usesVar() && lazy();
    }`)
	d := mustCompile(t, src).Evaluate(fsReq(Create, "c/x", user("alice"), nil, map[string]any{}))
	if !d.Allow {
		t.Fatalf("denied: %s", d.Message)
	}
}

func TestRuleset_Evaluate_ReadBudget(t *testing.T) {
	docs := memDocs{before: map[string]map[string]any{}}
	var distinct, same []string
	for i := range 11 {
		distinct = append(distinct, "exists(/databases/$(database)/documents/u/d"+string(rune('a'+i))+")")
		same = append(same, "exists(/databases/$(database)/documents/u/same)")
	}
	if d := evalExpr(t, "!("+strings.Join(distinct, " || ")+")", docs); d.Allow || !strings.Contains(d.Message, "Exceeded maximum number of document reads") {
		t.Fatalf("11 distinct reads: allow=%v %q", d.Allow, d.Message)
	}
	if d := evalExpr(t, "!("+strings.Join(same, " || ")+")", docs); !d.Allow {
		t.Fatalf("same document 11 times should be cached: %q", d.Message)
	}
	rs := mustCompile(t, w2("match /c/{id} { allow create: if !("+strings.Join(distinct, " || ")+"); }"))
	req := fsReq(Create, "c/x", user("alice"), nil, map[string]any{})
	req.Documents, req.Batch = docs, true
	if d := rs.Evaluate(req); !d.Allow {
		t.Fatalf("a batch may read 20 documents: %q", d.Message)
	}
}

func TestRuleset_Evaluate_CollectionGroupScopes(t *testing.T) {
	rs := mustCompile(t, w2(`match /users/{uid}/{rest=**} { allow list: if request.auth.uid == uid; }
    match /{path=**}/tags/{t} { allow list: if path == null; }`))
	scoped := &Request{Service: Firestore, Method: List, Path: db + "users/alice", Auth: user("alice"), Query: &Query{CollectionGroup: "posts"}}
	if d := rs.Evaluate(scoped); !d.Allow {
		t.Fatalf("group query scoped under users/alice: %q", d.Message)
	}
	scoped.Auth = user("bob")
	if d := rs.Evaluate(scoped); d.Allow {
		t.Fatal("bob listed alice's subtree")
	}
	tags := &Request{Service: Firestore, Method: List, Path: strings.TrimSuffix(db, "/"), Query: &Query{CollectionGroup: "tags"}}
	if d := rs.Evaluate(tags); d.Allow || !strings.Contains(d.Message, "Unknown value") {
		t.Fatalf("reading the unknown recursive prefix must error: %+v", d)
	}
}

func TestRuleset_Evaluate_ListQueries(t *testing.T) {
	rs := mustCompile(t, w2(`match /rooms/{r} { allow list: if request.auth.uid in resource.data.members; }
    match /users/{uid}/posts/{p} { allow list: if request.auth.uid == uid && p == null; }`))
	q := &Query{Filters: []Filter{{"members", "array-contains", "alice"}}}
	r := fsReq(List, "rooms", user("alice"), nil, nil)
	r.Query = q
	if d := rs.Evaluate(r); !d.Allow {
		t.Fatalf("array-contains: %q", d.Message)
	}
	r = fsReq(List, "rooms", user("bob"), nil, nil)
	r.Query = q
	if d := rs.Evaluate(r); d.Allow {
		t.Fatal("bob allowed to list alice's rooms")
	}
	if d := rs.Evaluate(fsReq(List, "users/alice/posts", user("alice"), nil, nil)); !d.Allow {
		t.Fatalf("collection wildcard: %q", d.Message)
	}
	if d := rs.Evaluate(fsReq(List, "users/alice/posts", user("bob"), nil, nil)); d.Allow {
		t.Fatal("bob listed alice's posts")
	}
}

func TestRuleset_Evaluate_StorageV1List(t *testing.T) {
	rs := mustCompile(t, "service firebase.storage { match /b/{bucket}/o { match /{all=**} { allow read; } } }")
	d := rs.Evaluate(&Request{Service: Storage, Method: List, Path: "/b/bkt/o/x"})
	if d.Allow || !strings.Contains(d.Message, "rules_version='2'") {
		t.Fatalf("got %+v", d)
	}
	if d := rs.Evaluate(&Request{Service: Storage, Method: Get, Path: "/b/bkt/o/x/y"}); !d.Allow {
		t.Fatalf("get: %q", d.Message)
	}
	if d := rs.Evaluate(&Request{Service: Storage, Method: Delete, Path: "/b/bkt/o/x/y"}); d.Allow {
		t.Fatal("read must not permit delete")
	}
}

func TestRuleset_Evaluate_ListConstraints(t *testing.T) {
	rs := mustCompile(t, w2(`match /m/{id} { allow list: if resource.data.x > 5 && resource.data.s != 'secret'; }`))
	tests := []struct {
		name    string
		filters []Filter
		allow   bool
	}{
		{"range implies rule", []Filter{{"x", ">", int64(10)}, {"s", "==", "pub"}}, true},
		{"inclusive bound equal to rule bound", []Filter{{"x", ">=", int64(5)}, {"s", "==", "pub"}}, false},
		{"exclusive bound equal to rule bound", []Filter{{"x", ">", int64(5)}, {"s", "==", "pub"}}, true},
		{"upper bound only", []Filter{{"x", "<", int64(10)}, {"s", "==", "pub"}}, false},
		{"not-equal proves !=", []Filter{{"x", ">", 6.5}, {"s", "!=", "secret"}}, true},
		{"not-in proves !=", []Filter{{"x", ">", int64(6)}, {"s", "not-in", []any{"a", "secret"}}}, true},
		{"other exclusion does not", []Filter{{"x", ">", int64(6)}, {"s", "!=", "other"}}, false},
		{"equality wins over nothing", []Filter{{"x", "==", int64(6)}, {"s", "==", "secret"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := fsReq(List, "m", nil, nil, nil)
			r.Query = &Query{Filters: tc.filters}
			if d := rs.Evaluate(r); d.Allow != tc.allow {
				t.Fatalf("Allow = %v, want %v (%q)", d.Allow, tc.allow, d.Message)
			}
		})
	}
}
