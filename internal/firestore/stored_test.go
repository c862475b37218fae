package firestore

import (
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// storedPaths are the field paths the stored-document tests read: present,
// nested, absent, and through values that are not maps.
var storedPaths = []string{"a", "b", "c", "tags", "m", "m.x", "m.y", "a.x", "tags.x", "zz", "`m`.`x`"}

// TestStoredDoc_FieldMatchesDecoded checks that reading one field from a
// document's stored bytes gives what reading the decoded document gives.
func TestStoredDoc_FieldMatchesDecoded(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		doc := randomDoc(r, "items/d").GetUpdate()
		doc.UpdateTime = timestamppb.Now()
		raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		encoded, decoded := storedDoc{encoded: raw}, storedDoc{doc: doc}
		for _, p := range storedPaths {
			path, err := ParseFieldPath(p)
			if err != nil {
				t.Fatal(err)
			}
			got, gotOK := encoded.field(path)
			want, wantOK := decoded.field(path)
			if gotOK != wantOK || !proto.Equal(got, want) {
				t.Fatalf("doc %d field %s: stored bytes give %v %v, decoded %v %v", i, p, got, gotOK, want, wantOK)
			}
		}
		head, err := parseEncodedDoc(raw)
		if err != nil || head.path != "items/d" || !head.updateTime.Equal(doc.UpdateTime.AsTime()) {
			t.Fatalf("header %+v, %v", head, err)
		}
		if got, want := encoded.updateTime(), decoded.updateTime(); !got.Equal(want) || !want.Equal(doc.UpdateTime.AsTime()) {
			t.Fatalf("update time: stored bytes give %v, decoded %v, want %v", got, want, doc.UpdateTime.AsTime())
		}
	}
}

// FuzzStoredDoc feeds arbitrary bytes to the stored-document readers: they
// must answer or fail, never panic.
func FuzzStoredDoc(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 8 {
		raw, _ := proto.Marshal(randomDoc(r, "items/d").GetUpdate())
		f.Add(raw)
	}
	f.Add([]byte{0x12, 0x03, 0x0a, 0x01, 'a'})
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, _ = parseEncodedDoc(raw)
		_, _ = parseFrame(raw)
		s := storedDoc{encoded: raw}
		for _, p := range storedPaths {
			path, _ := ParseFieldPath(p)
			_, _ = s.field(path)
			_ = s.updateTime()
		}
		_ = s.decode("items/d")
	})
}
