package rules

import (
	"errors"
	"strings"
	"testing"
)

func TestCompile_Errors(t *testing.T) {
	tests := []struct {
		name, src string
		line, col int
		msg       string
	}{
		{"garbage", "rules_version = '2';\nservice cloud.firestore {\n  match /a/{b} {\n    asd232w\n  }\n}", 4, 5, "Unexpected 'asd232w'."},
		{"bad version", "rules_version = '3';\nservice cloud.firestore {}", 1, 17, "rules_version must be '1' or '2'"},
		{"missing service", "rules_version = '2';\n", 2, 1, "missing service declaration"},
		{"unknown service", "service cloud.nope {}", 1, 9, "unknown service 'cloud.nope'"},
		{"unknown method", "service cloud.firestore { match /a/{b} { allow reed: if true; } }", 1, 48, "unknown method 'reed'"},
		{"missing if", "service cloud.firestore { match /a/{b} { allow read: true; } }", 1, 54, "expected 'if', found 'true'"},
		{"unclosed paren", "service cloud.firestore { match /a/{b} {\n allow read: if (true;\n} }", 2, 22, "expected ')', found ';'"},
		{"bad escape", "service cloud.firestore { match /a/{b} { allow read: if 'a\\d' == 'x'; } }", 1, 59, "invalid escape sequence '\\d'"},
		{"unterminated string", "service cloud.firestore { match /a/{b} { allow read: if 'abc; } }", 1, 57, "unterminated string literal"},
		{"let in v1", "service cloud.firestore { function f() { let a = 1; return a; } }", 1, 42, "let requires rules_version = '2'"},
		{"missing return", "rules_version = '2'; service cloud.firestore { function f() { let a = 1; } }", 1, 74, "expected 'return'"},
		{"recursion", "rules_version = '2'; service cloud.firestore {\nfunction f(n) { return g(n); }\nfunction g(n) { return f(n); } }", 2, 10, "recursive or cyclic call of function 'f'"},
		{"duplicate var", "service cloud.firestore { match /a/{x} {\n  match /b/{x} { allow read; } } }", 2, 13, "Duplicate path variable 'x'"},
		{"v1 recursive not last", "service cloud.firestore { match /{p=**}/a { allow read; } }", 1, 35, "must be the last segment"},
		{"empty range", "service cloud.firestore { match /a/{b} { allow read: if 'a'[:] == ''; } }", 1, 60, "a range needs at least one bound"},
		{"unknown type", "service cloud.firestore { match /a/{b} { allow read: if 1 is integer; } }", 1, 62, "unknown type 'integer'"},
		{"too many params", "service cloud.firestore { function f(a,b,c,d,e,f,g,h) { return 1; } }", 1, 36, "more than 7 parameters"},
		{"allow outside match", "service cloud.firestore { allow read; }", 1, 27, "allow outside of a match block"},
		{"keyword as operand", "service cloud.firestore { match /a/{b} { allow read: if return; } }", 1, 57, "Unexpected 'return'."},
		{"int overflow", "service cloud.firestore { match /a/{b} { allow read: if 99999999999999999999 > 1; } }", 1, 57, "out of range"},
		{"unterminated comment", "service cloud.firestore { /* x", 1, 27, "unterminated comment"},
		{"end of input", "service cloud.firestore { match /a/{b} { allow read: if", 1, 56, "unexpected end of input"},
		// The official compiler (the Firestore emulator 1.19.9's) wants these
		// semicolons: "L5:7 missing ';' at 'return'" and "Unexpected ';'." for
		// one after a block or a second one.
		{"let without semicolon", "rules_version = '2';\nservice cloud.firestore { function f() { let x = 1\n return x; } }", 3, 2, "expected ';', found 'return'"},
		{"semicolon after a block", "rules_version = '2';\nservice cloud.firestore { match /a/{b} { allow read; }; }", 2, 55, "Unexpected ';'."},
		{"two semicolons", "rules_version = '2';;\nservice cloud.firestore {}", 1, 21, "Unexpected ';'."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.src, "firestore.rules")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *ParseError", err)
			}
			if pe.Line != tc.line || pe.Col != tc.col || !strings.Contains(pe.Msg, tc.msg) {
				t.Fatalf("got %d:%d %q, want %d:%d containing %q\n%v", pe.Line, pe.Col, pe.Msg, tc.line, tc.col, tc.msg, err)
			}
		})
	}
}

func TestParseError_Error(t *testing.T) {
	_, err := Compile("service cloud.firestore {\n  match /a/{b} {\n    allow read: if 1 +;\n  }\n}", "firestore.rules")
	want := "firestore.rules:3:23: Unexpected ';'.\n |     allow read: if 1 +;\n | ......................^"
	if err == nil || err.Error() != want {
		t.Fatalf("got\n%v\nwant\n%s", err, want)
	}
}

func TestCompile_Accepts(t *testing.T) {
	srcs := []string{
		"service cloud.firestore { match /databases/{db}/documents { match /{doc=**} { allow read, write: if false } } }",
		"rules_version = \"2\";\nfunction g() { return true; }\nservice firebase.storage { match /b/{bucket}/o { match /images/profilePhoto.png { allow get: if g() } } }",
		"// comment\nservice cloud.storage { /* c */ match /b/{bucket}/o { allow read; } }",
		"rules_version = '2'; service cloud.firestore { match /databases/{d}/documents { allow get: if get(/databases/(default)/documents/a/b) == null && [1,2,][0] == 1 && {'a':1,}.a == 1; } }",
		// Semicolons the official compiler (the Firestore emulator 1.19.9's)
		// takes as optional: after rules_version, an allow and a return.
		"rules_version='2'\nservice cloud.firestore { match /databases/{d}/documents { match /{doc=**} { allow read, write: if false } } }",
		"rules_version = '1'\nservice cloud.firestore { match /databases/{d}/documents { match /{doc=**} { allow read } } }",
		"rules_version='2'service cloud.firestore { match /databases/{d}/documents { function f() { return true } match /{doc=**} { allow read: if f() } } }",
		"rules_version = '2'\n// a comment\nservice firebase.storage { match /b/{bucket}/o { match /{all=**} { allow read: if request.auth != null } } }",
	}
	for _, src := range srcs {
		if _, err := Compile(src, "x.rules"); err != nil {
			t.Errorf("Compile(%q): %v", src, err)
		}
	}
}
