package firestore

import (
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/errs"
)

// FuzzParseDocumentName: document names from any transport either fail with
// INVALID_ARGUMENT or parse into a name that prints back to the same text,
// with an even number of valid segments under documents/.
func FuzzParseDocumentName(f *testing.F) {
	for _, s := range []string{
		"projects/p/databases/(default)/documents/users/u1",
		"projects/p/databases/(default)/documents/a/b/c/d",
		"projects/p/databases/(default)/documents/users",
		"projects/p/databases/(default)/documents/users/..",
		"projects/p/databases/(default)/documents/users/__x__",
		"projects/p/databases/(default)/documents//u1",
		"projects//databases/d/documents/a/b",
		"projects/p/databases/d/documents/a/b/",
		"projects/p/databases/d/documents/é/\u0000",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseDocumentName(s)
		if err != nil {
			if errs.KindOf(err) != errs.InvalidArgument {
				t.Fatalf("%q: error kind %v, want InvalidArgument", s, errs.KindOf(err))
			}
			return
		}
		if !n.IsDocument() || n.String() != s {
			t.Fatalf("%q parsed as %q (document %v)", s, n.String(), n.IsDocument())
		}
		for _, seg := range n.Path {
			if seg == "" || seg == "." || seg == ".." || strings.Contains(seg, "/") {
				t.Fatalf("%q: segment %q accepted", s, seg)
			}
		}
	})
}
