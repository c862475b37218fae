package rules

import (
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/database"
)

const chatRules = `{
  // Comments are allowed, as in production.
  "rules": {
    "users": {
      "$uid": {
        ".read": "auth != null && auth.uid === $uid",
        ".write": "auth !== null && auth.uid == $uid",
        ".validate": "newData.hasChildren(['name'])",
        "name": { ".validate": "newData.isString() && newData.val().length <= 10" },
        "age": { ".validate": "newData.isNumber() && newData.val() >= 0" },
        "$other": { ".validate": false }
      }
    },
    "rooms": {
      ".read": "query.orderByChild === 'open' && query.limitToFirst <= 10",
      ".indexOn": ["open", "size"],
      "$room": {
        ".write": "auth.token.admin === true || (!data.exists() && newData.child('owner').val() === auth.uid)",
        "title": { ".validate": "newData.val().matches(/^[a-z ]+$/i) && !newData.val().contains('spam')" }
      }
    },
    "public": { ".read": true, ".write": "now > 0", "locked": { ".write": false } },
    "stamps": { "$s": { ".validate": "newData.val() <= now && root.child('public/ok').val() === true" } }
  }
}`

func tree(t *testing.T, js string) *database.Node {
	t.Helper()
	n, err := database.ParseJSON([]byte(js), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func path(s string) database.Path {
	p, _ := database.ParsePath(s)
	return p
}

func user(uid string, claims map[string]any) map[string]any {
	token := map[string]any{"sub": uid}
	for k, v := range claims {
		token[k] = v
	}
	return map[string]any{"uid": uid, "provider": "password", "token": token}
}

func TestRules_ReadCascadesAndSeesQueries(t *testing.T) {
	rs, err := Compile(chatRules, "database.rules.json")
	if err != nil {
		t.Fatal(err)
	}
	root := tree(t, `{"users":{"ann":{"name":"Ann"}},"rooms":{"r1":{"open":true}}}`)
	for _, tc := range []struct {
		name  string
		path  string
		auth  map[string]any
		query map[string]any
		allow bool
		line  int
	}{
		{"own profile", "/users/ann", user("ann", nil), nil, true, 6},
		{"below a grant", "/users/ann/name", user("ann", nil), nil, true, 6},
		{"someone else's", "/users/ann", user("bob", nil), nil, false, 0},
		{"signed out: auth is null", "/users/ann", nil, nil, false, 0},
		{"no rule says yes above", "/users", user("ann", nil), nil, false, 0},
		{"a query the rule accepts", "/rooms", nil, map[string]any{"orderByChild": "open", "limitToFirst": 5.0}, true, 15},
		{"a query it refuses", "/rooms", nil, map[string]any{"orderByChild": "open", "limitToFirst": 50.0}, false, 0},
		{"no query: limitToFirst is null", "/rooms", nil, map[string]any{}, false, 0},
		{"public", "/public/anything", nil, nil, true, 22},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := rs.Read(root, path(tc.path), Request{Auth: tc.auth, Now: 1, Query: tc.query})
			if d.Allow != tc.allow || d.Line != tc.line {
				t.Fatalf("allow=%v line=%d, want %v %d; tried %+v", d.Allow, d.Line, tc.allow, tc.line, d.Tried)
			}
		})
	}
}

func TestRules_WriteNeedsAGrantAndEveryValidation(t *testing.T) {
	rs, err := Compile(chatRules, "database.rules.json")
	if err != nil {
		t.Fatal(err)
	}
	before := tree(t, `{"users":{"ann":{"name":"Ann"}},"rooms":{"r1":{"owner":"bob","title":"hi"}},"public":{"ok":true}}`)
	for _, tc := range []struct {
		name  string
		path  string
		data  string
		auth  map[string]any
		allow bool
	}{
		{"own profile", "/users/ann", `{"name":"Ann B","age":3}`, user("ann", nil), true},
		{"a grant at a parent holds for a child", "/users/ann/age", `4`, user("ann", nil), true},
		{"validation below the write", "/users/ann", `{"name":"A very long name"}`, user("ann", nil), false},
		{"validation above the write: name is required", "/users/cy/age", `4`, user("cy", nil), false},
		{"$other refuses unknown children", "/users/ann", `{"name":"Ann","x":1}`, user("ann", nil), false},
		{"delete skips validation", "/users/ann", `null`, user("ann", nil), true},
		{"someone else's", "/users/ann/age", `4`, user("bob", nil), false},
		{"signed out: auth.token fails, so the rule is false", "/rooms/r2", `{"owner":"x"}`, nil, false},
		{"create a room as its owner", "/rooms/r2", `{"owner":"cy","title":"Chat Room"}`, user("cy", nil), true},
		{"regex and contains", "/rooms/r2", `{"owner":"cy","title":"spam room"}`, user("cy", nil), false},
		{"overwrite someone else's room", "/rooms/r1", `{"owner":"cy"}`, user("cy", nil), false},
		{"admin claim", "/rooms/r1/title", `"ok"`, user("cy", map[string]any{"admin": true}), true},
		{"false below a grant does not revoke it", "/public/locked", `1`, nil, true},
		{"now and root", "/stamps/a", `5`, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := path(tc.path)
			after := before.WithAt(p, tree(t, tc.data))
			d := rs.Write(before, after, []database.Path{p}, Request{Auth: tc.auth, Now: 10})
			if d.Allow != tc.allow {
				t.Fatalf("allow=%v, want %v; tried %+v", d.Allow, tc.allow, d.Tried)
			}
		})
	}
}

func TestRules_IndexOn(t *testing.T) {
	rs, err := Compile(chatRules, "")
	if err != nil {
		t.Fatal(err)
	}
	if !rs.Indexed(path("/rooms"), database.Index{Kind: database.ByChild, Path: path("size")}) {
		t.Error("rooms by size is indexed")
	}
	if rs.Indexed(path("/rooms"), database.Index{Kind: database.ByChild, Path: path("title")}) {
		t.Error("rooms by title is not indexed")
	}
	if rs.Indexed(path("/users"), database.Index{Kind: database.ByValue}) {
		t.Error("users by value is not indexed")
	}
}

func TestCompile_ErrorsNameLineAndColumn(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`{"rules": {".read": "auth.uid ==="}}`, "Line 1, column 34: unexpected end of the expression"},
		{"{\n  \"rules\": {\n    \".read\": \"newData.exists()\"\n  }\n}", "Line 3, column 15: Unknown variable 'newData'."},
		{`{"rules": {"a": {".write": "$b === 1"}}}`, "Line 1, column 29: Unknown variable '$b'."},
		{`{"rules": {".write": 1}}`, "Line 1, column 22: .write must be a boolean or an expression string"},
		{`{"rules": {".reed": true}}`, "Line 1, column 21: Invalid key: .reed"},
		{`{"rules": {"$a": {}, "$b": {}}}`, "Line 1, column 28: Only one $ location allowed beside $a"},
		{`{"rules": {}`, "Line 1, column 13: expected , or }"},
		{"{\"rules\": {\".read\": true,,}}", "Line 1, column 26: expected a key in double quotes"},
		{`{"rulez": {}}`, `Line 1, column 1: the rules file has no "rules" key`},
		{`{"rules": {".read": "data.val() matches /(/"}}`, "Line 1, column 33: unexpected"},
	} {
		_, err := Compile(tc.src, "")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s", tc.src, err, tc.want)
		}
	}
}

func TestRules_CoverageCountsOutcomes(t *testing.T) {
	rs, err := Compile(chatRules, "")
	if err != nil {
		t.Fatal(err)
	}
	root := tree(t, `{}`)
	rs.Read(root, path("/users/ann"), Request{Auth: user("ann", nil)})
	rs.Read(root, path("/users/ann"), Request{})
	for _, c := range rs.Coverage() {
		if c.Path == "/users/$uid" && c.Kind == ".read" {
			if c.Hits != (Hits{True: 1, Errors: 0, False: 1}) {
				t.Fatalf("hits %+v", c.Hits)
			}
			return
		}
	}
	t.Fatal("no coverage of /users/$uid .read")
}

// TestCompile_ByteOrderMark: a rules file saved with a UTF-8 byte-order mark
// (as some Windows editors save it) compiles, with comments.
func TestCompile_ByteOrderMark(t *testing.T) {
	if _, err := Compile("\uFEFF{\n  // open for reads\n  \"rules\": {\".read\": true}\n}", "database.rules.json"); err != nil {
		t.Fatal(err)
	}
}
