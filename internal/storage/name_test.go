package storage

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"videos/sam/clip.mp4", true},
		{"a/%2F../b", true}, // "%2F.." is a name segment, not a parent reference
		{"..x/y..", true},
		{"Zürich 😀.png", true},
		{"", false},
		{"..", false},
		{"./x", false},
		{"a/../b", false},
		{"a/.", false},
		{"x\x00y", false},
		{"x\ny", false},
		{"x\x7fy", false},
		{"\xff", false},
		{strings.Repeat("n", 1024), true},
		{strings.Repeat("n", 1025), false},
	} {
		if err := ValidateName(tc.name); (err == nil) != tc.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// FuzzValidateName checks that every accepted name maps to one file directly
// inside its bucket's folder, named by no part of the name.
func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"a", "a/b", "../x", "a/..", "x\x01", "a\\..\\b", "%2e%2e"} {
		f.Add(s)
	}
	st, err := OpenStore(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidateName(name) != nil {
			return
		}
		if strings.Contains("/"+name+"/", "/../") || strings.ContainsAny(name, "\x00\n\r") {
			t.Fatalf("accepted %q", name)
		}
		p := st.objectPath("b", name)
		if filepath.Dir(p) != st.bucketPath("b") || len(filepath.Base(p)) != 64 {
			t.Fatalf("%q maps outside its bucket, or to a name of its own: %s", name, p)
		}
	})
}
