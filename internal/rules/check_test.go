package rules

import (
	"os"
	"strings"
	"testing"
)

// TestCheck_Warnings: the check phase reports what production's rules
// compiler reports, worded as firebase-tools prints it, at the line and
// column of the name, and the file still compiles (as it deploys).
func TestCheck_Warnings(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"undefined function", w2("    match /a/{id} {\n      allow read: if isOwnr(id);\n    }\n    function isOwner(id) { return request.auth.uid == id; }"),
			[]string{"[W] 5:22 - Invalid function name: isOwnr.", "[W] 7:14 - Unused function: isOwner."}},
		{"unknown variable", w2("    match /a/{id} {\n      allow read: if requst.auth != null && id != null;\n    }"),
			[]string{"[W] 5:22 - Invalid variable name: requst."}},
		{"a path variable of another match", w2("    match /a/{aid} { allow read; }\n    match /b/{bid} {\n      allow read: if aid == bid;\n    }"),
			[]string{"[W] 6:22 - Invalid variable name: aid."}},
		{"wrong arity", w2("    function owns(id) { return request.auth.uid == id; }\n    match /a/{id} {\n      allow read: if owns(id, 1) && exists();\n    }"),
			[]string{"[W] 6:22 - Invalid number of arguments for function owns: it takes 1, and the call passes 2.",
				"[W] 6:37 - Invalid number of arguments for function exists: it takes 1, and the call passes 0."}},
		{"unused parameter and let", w2("    function f(a, b) {\n      let c = a;\n      return a == 1;\n    }\n    match /x/{y} { allow read: if f(1, 2); }"),
			[]string{"[W] 4:19 - Unused variable: b.", "[W] 5:11 - Unused variable: c."}},
		{"get is Firestore's alone", s2("    match /{f} {\n      allow read: if get(/x) != null;\n    }"),
			[]string{"[W] 5:22 - Invalid function name: get."}},
		{"namespaces, shadowing, lets and path variables resolve", w2("    function f(x) {\n      let y = math.abs(x);\n      return y > 0 && timestamp.date(2020, 1, 1) < request.time && database != null;\n    }\n    match /c/{math} { allow read: if f(1) && math == 'c' && bool('true'); }"),
			nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := Compile(tc.src, "x.rules")
			if err != nil {
				t.Fatalf("the file must compile with warnings alone: %v", err)
			}
			var got []string
			for _, i := range rs.Issues {
				got = append(got, i.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("issues:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestCheck_RepositoryRulesAreClean: the app's own rules have no warnings.
func TestCheck_RepositoryRulesAreClean(t *testing.T) {
	for _, f := range []string{"../../firestore.rules", "../../storage.rules"} {
		rs := mustCompile(t, readFile(t, f))
		for _, i := range rs.Issues {
			t.Errorf("%s: %s", f, i)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
