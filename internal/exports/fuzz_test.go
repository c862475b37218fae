package exports

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"
)

// FuzzDecodeEntity: any record decodes to a document or an error, never a
// panic; a document that decodes encodes and decodes again to the same.
func FuzzDecodeEntity(f *testing.F) {
	for _, d := range fixtureDocs("p") {
		rec, err := encodeEntity(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(rec)
	}
	f.Add([]byte{})
	f.Add([]byte{0x6a, 0x00})
	f.Fuzz(func(t *testing.T, rec []byte) {
		d, err := decodeEntity(rec)
		if err != nil {
			return
		}
		docs := toDocuments([]entityDoc{d}, "p", fixtureTime)
		again, err := encodeEntity(docs[0])
		if err != nil {
			return // e.g. a name Firestore would refuse
		}
		d2, err := decodeEntity(again)
		if err != nil {
			t.Fatalf("re-decoding %q: %v", again, err)
		}
		docs2 := toDocuments([]entityDoc{d2}, "p", fixtureTime)
		if !proto.Equal(docs[0], docs2[0]) {
			t.Fatalf("round trip changed the document:\n%v\n%v", docs[0], docs2[0])
		}
	})
}

// FuzzReadLog: any file reads as records or fails with an error.
func FuzzReadLog(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join(emulatorFixture, "firestore_export", "firestore_export.overall_export_metadata"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = readLog(path, func(int, []byte) error { return nil })
		_, _, _ = readManagedExport(path)
	})
}
