package firestore

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/loupe-dev/loupe/internal/errs"
)

// FuzzParseIndexFile: an indexes file either fails to parse with an error,
// or parses into definitions that survive a round trip through JSON with
// the same keys, whose console links and representative queries build
// without fault, and which merge into themselves adding nothing.
func FuzzParseIndexFile(f *testing.F) {
	if repo, err := os.ReadFile("../../firestore.indexes.json"); err == nil {
		f.Add(repo)
	}
	for _, s := range []string{
		`{"indexes":[],"fieldOverrides":[]}`,
		`{"indexes":[{"collectionGroup":"c","queryScope":"COLLECTION_GROUP","fields":[{"fieldPath":"a","arrayConfig":"CONTAINS"},{"fieldPath":"b","order":"DESCENDING"}]}]}`,
		`{"indexes":[{"collectionGroup":"c","fields":[{"fieldPath":"e","vectorConfig":{"dimension":3,"flat":{}}}]}]}`,
		`{"indexes":[{"collectionGroup":"c","fields":[{"fieldPath":"a","order":"UP"}]}]}`,
		`{"indexes":[{"collectionGroup":"a/b","fields":[{"fieldPath":"a","order":"ASCENDING"}]}]}`,
		`{"indexes":[{"collectionGroup":"c","fields":[{"fieldPath":"` + "`x.y`" + `","order":"ASCENDING"},{"fieldPath":"__name__","order":"DESCENDING"}]}]}`,
		`{"indexes":{}}`,
		`{"indexes":[],"fieldOverrides":[{"collectionGroup":"c","fieldPath":"a","indexes":[{"order":"ASCENDING","queryScope":"COLLECTION_GROUP"},{"arrayConfig":"CONTAINS"}]}]}`,
		`{"indexes":[],"fieldOverrides":[{"collectionGroup":"c","fieldPath":"a","ttl":true,"indexes":[]}]}`,
		`[]`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := ParseIndexFile(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(file)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseIndexFile(again)
		if err != nil {
			t.Fatalf("%s does not parse back: %v", again, err)
		}
		if len(back.Indexes) != len(file.Indexes) {
			t.Fatalf("round trip changed the number of indexes")
		}
		for i, d := range file.Indexes {
			if back.Indexes[i].indexKey() != d.indexKey() {
				t.Fatalf("round trip changed %s into %s", d.indexKey(), back.Indexes[i].indexKey())
			}
			_ = consoleLink("create_composite", "projects/p/databases/(default)", "indexes/_", d)
			if _, err := planQuery("projects/p/databases/(default)/documents", representativeQuery(d)); err != nil && errs.KindOf(err) != errs.InvalidArgument {
				t.Fatalf("representative query of %s: %v", d.indexKey(), err)
			}
		}
		if _, added := MergeIndexDefs(file.Indexes, file.Indexes); added != 0 {
			t.Fatalf("merging a file's indexes into themselves added %d", added)
		}
		if _, added := MergeFieldOverrides(file.FieldOverrides, file.FieldOverrides); added != 0 {
			t.Fatalf("merging a file's field overrides into themselves added %d", added)
		}
	})
}
