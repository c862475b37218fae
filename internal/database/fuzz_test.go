package database

import (
	"bytes"
	"testing"
)

// FuzzParseJSON checks that any body either fails as invalid data or builds
// a node whose export JSON reads back to the same node.
func FuzzParseJSON(f *testing.F) {
	for _, seed := range []string{`null`, `{"a":{"b":[1,2,{"c":"d"}]}}`, `{".value":1,".priority":"x"}`,
		`{"a":{".sv":"timestamp"},"b":{".sv":{"increment":1.5}}}`, `[null,null,3]`, `"\u0000"`, `1e308`, `{"a.b":1}`, `{"":{}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := ParseJSON(data, NewNumber(1), &ServerValues{Now: 5})
		if err != nil {
			return
		}
		again, err := ParseJSON(n.ExportJSON(), nil, nil)
		if err != nil {
			t.Fatalf("export of %q does not parse: %s: %v", data, n.ExportJSON(), err)
		}
		if !Equal(n, again) || !bytes.Equal(n.ExportJSON(), again.ExportJSON()) || n.Hash() != again.Hash() {
			t.Fatalf("%q: %s read back as %s", data, n.ExportJSON(), again.ExportJSON())
		}
	})
}

// FuzzParsePath checks that a path either fails or round-trips.
func FuzzParsePath(f *testing.F) {
	for _, seed := range []string{"/", "/a/b", "a//b/", "/a/.priority", "/a.b", "/\x7f", "/" + string(make([]byte, 800))} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		q, err := ParsePath(p.String())
		if err != nil || !p.Equal(q) {
			t.Fatalf("%q → %s → %v %v", s, p, q, err)
		}
	})
}
