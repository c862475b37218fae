package rules

import (
	"testing"

	"github.com/loupe-dev/loupe/internal/database"
)

// FuzzCompile checks that any rules file either fails with a line and
// column or compiles into rules that judge reads and writes without
// panicking.
func FuzzCompile(f *testing.F) {
	f.Add(chatRules)
	for _, seed := range []string{`{"rules": {".read": "data.child('a/b').val() + 1 > 2 ? true : false"}}`,
		`{"rules": {"$a": {".write": "$a.matches(/^x/i) || newData.parent().hasChildren()", ".validate": "newData.getPriority() == null"}}}`,
		`{"rules": {".read": "auth.token['firebase'].sign_in_provider == 'password' && root.child('x').exists()"}}`,
		`/* c */ {"rules": {".indexOn": ["a"], "a": {".read": "'x'.length === 1 && !(-1 > 0) && 7 % 2 == 1"}}}`,
		`{"rules": {".read": "(((("}}`, `{"rules": {".read": "'\\`, `{`} {
		f.Add(seed)
	}
	before, _ := database.ParseJSON([]byte(`{"a":{"b":1,"x":"y"},"c":[1,2]}`), nil, nil)
	after := before.WithAt(database.Path{"a", "z"}, database.NewString("new"))
	f.Fuzz(func(t *testing.T, src string) {
		rs, err := Compile(src, "fuzz.json")
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("%q: an error without a position: %v", src, err)
			}
			return
		}
		req := Request{Auth: map[string]any{"uid": "u", "token": map[string]any{"firebase": map[string]any{}}}, Now: 5}
		rs.Read(before, database.Path{"a", "b"}, req)
		rs.Write(before, after, []database.Path{{"a", "z"}}, req)
		rs.Coverage()
	})
}
