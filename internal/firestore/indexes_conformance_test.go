package firestore_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	adminpb "cloud.google.com/go/firestore/apiv1/admin/adminpb"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

const declaredIndexes = `{
  "indexes": [
    {"collectionGroup": "cities", "queryScope": "COLLECTION",
     "fields": [{"fieldPath": "state", "order": "ASCENDING"}, {"fieldPath": "population", "order": "DESCENDING"}]},
    {"collectionGroup": "docs", "queryScope": "COLLECTION",
     "fields": [{"fieldPath": "e", "vectorConfig": {"dimension": 2, "flat": {}}}]}
  ],
  "fieldOverrides": [
    {"collectionGroup": "cities", "fieldPath": "state", "indexes": [
      {"order": "ASCENDING", "queryScope": "COLLECTION"}, {"order": "DESCENDING", "queryScope": "COLLECTION"},
      {"order": "ASCENDING", "queryScope": "COLLECTION_GROUP"}]}
  ]
}`

// startWithIndexes runs loupe with a firebase.json declaring declaredIndexes.
func startWithIndexes(t *testing.T, args ...string) (*loupetest.Instance, *firestore.Client, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "firestore.indexes.json"), []byte(declaredIndexes), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "firebase.json")
	if err := os.WriteFile(cfg, []byte(`{"firestore": {"indexes": "firestore.indexes.json"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: cfg, Args: args})
	c := newClient(t, inst)
	seed(t, c, "cities", map[string]map[string]any{
		"sf": {"state": "CA", "country": "US", "population": 800},
		"la": {"state": "CA", "country": "US", "population": 4000},
		"ny": {"state": "NY", "country": "US", "population": 8000},
	})
	seed(t, c, "docs", map[string]map[string]any{"a": {"e": firestore.Vector64{1, 0}}, "b": {"e": firestore.Vector64{0, 1}}})
	return inst, c, dir
}

// TestConformance_EnforcedIndexes: with --enforce-indexes a query needing a
// composite index firestore.indexes.json lacks fails as production fails
// it, with the console link that creates the index; declared indexes and
// single-field queries work.
func TestConformance_EnforcedIndexes(t *testing.T) {
	ctx := context.Background()
	inst, c, _ := startWithIndexes(t, "--enforce-indexes")
	cities := c.Collection("cities")
	if got := ids(t, cities.Where("state", "==", "CA").OrderBy("population", firestore.Desc)); got != "la,sf" {
		t.Errorf("declared index: %q", got)
	}
	if got := ids(t, cities.Where("country", "==", "US").Where("state", "==", "CA")); got != "la,sf" {
		t.Errorf("equalities merge single-field indexes: %q", got)
	}
	if got := ids(t, cities.OrderBy("population", firestore.Desc).Limit(1)); got != "ny" {
		t.Errorf("single field: %q", got)
	}

	_, err := cities.Where("country", "==", "US").OrderBy("population", firestore.Desc).Documents(ctx).GetAll()
	const prefix = "The query requires an index. You can create it here: https://console.firebase.google.com/v1/r/project/demo-loupe/firestore/indexes?create_composite="
	msg := status.Convert(err).Message()
	if status.Code(err) != codes.FailedPrecondition || !strings.HasPrefix(msg, prefix) {
		t.Fatalf("undeclared index: %v", err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(msg, prefix))
	if err != nil {
		t.Fatal(err)
	}
	ix := &adminpb.Index{}
	if err := proto.Unmarshal(raw, ix); err != nil {
		t.Fatal(err)
	}
	want := &adminpb.Index{
		Name:       "projects/demo-loupe/databases/(default)/collectionGroups/cities/indexes/_",
		QueryScope: adminpb.Index_COLLECTION,
		Fields: []*adminpb.Index_IndexField{
			{FieldPath: "country", ValueMode: &adminpb.Index_IndexField_Order_{Order: adminpb.Index_IndexField_ASCENDING}},
			{FieldPath: "population", ValueMode: &adminpb.Index_IndexField_Order_{Order: adminpb.Index_IndexField_DESCENDING}},
			{FieldPath: "__name__", ValueMode: &adminpb.Index_IndexField_Order_{Order: adminpb.Index_IndexField_DESCENDING}},
		},
	}
	if !proto.Equal(ix, want) {
		t.Errorf("link encodes %v, want %v", ix, want)
	}

	// Declarations are per database: the object form's are (default)'s.
	orders, err := firestore.NewClientWithDatabase(ctx, "demo-loupe", "orders")
	if err != nil {
		t.Fatal(err)
	}
	defer orders.Close()
	_, err = orders.Collection("cities").Where("state", "==", "CA").OrderBy("population", firestore.Desc).Documents(ctx).GetAll()
	wantCode(t, err, codes.FailedPrecondition, "https://console.firebase.google.com/v1/r/project/demo-loupe/firestore/databases/orders/indexes?create_composite=")

	// Collection group queries need the single-field indexes a field
	// override declares; an override that leaves out an automatic index
	// removes it.
	if got := ids(t, c.CollectionGroup("cities").Where("state", "==", "CA")); got != "la,sf" {
		t.Errorf("declared collection group index: %q", got)
	}
	_, err = c.CollectionGroup("cities").Where("country", "==", "US").Documents(ctx).GetAll()
	const exemption = "The query requires a COLLECTION_GROUP_ASC index for collection cities and field country. You can create it here: https://console.firebase.google.com/v1/r/project/demo-loupe/firestore/indexes?create_exemption="
	msg = status.Convert(err).Message()
	if status.Code(err) != codes.FailedPrecondition || !strings.HasPrefix(msg, exemption) {
		t.Fatalf("undeclared collection group index: %v", err)
	}
	raw, err = base64.RawURLEncoding.DecodeString(strings.TrimPrefix(msg, exemption))
	if err != nil {
		t.Fatal(err)
	}
	ix = &adminpb.Index{}
	if err := proto.Unmarshal(raw, ix); err != nil {
		t.Fatal(err)
	}
	want = &adminpb.Index{
		Name:       "projects/demo-loupe/databases/(default)/collectionGroups/cities/fields/country",
		QueryScope: adminpb.Index_COLLECTION_GROUP,
		Fields:     []*adminpb.Index_IndexField{{FieldPath: "country", ValueMode: &adminpb.Index_IndexField_Order_{Order: adminpb.Index_IndexField_ASCENDING}}},
	}
	if !proto.Equal(ix, want) {
		t.Errorf("exemption link encodes %v, want %v", ix, want)
	}
	_, err = cities.Where("state", "array-contains", "CA").Documents(ctx).GetAll()
	wantCode(t, err, codes.FailedPrecondition, "index for collection cities and field state. You can create it here: ")

	// Listeners need the same index.
	it := cities.Where("country", "==", "US").OrderBy("population", firestore.Asc).Snapshots(ctx)
	_, err = it.Next()
	it.Stop()
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("listener on an undeclared index: %v", err)
	}

	// Vector search needs its vector index, of the query's dimension.
	docs := c.Collection("docs")
	if got := vectorIDs(t, docs.FindNearest("e", firestore.Vector64{1, 0.1}, 1, firestore.DistanceMeasureEuclidean, nil)); got != "a" {
		t.Errorf("declared vector index: %q", got)
	}
	_, err = docs.FindNearest("e", firestore.Vector64{1, 0, 0}, 1, firestore.DistanceMeasureEuclidean, nil).Documents(ctx).GetAll()
	wantCode(t, err, codes.InvalidArgument, "dimensions")
	_, err = docs.FindNearest("other", firestore.Vector64{1, 0}, 1, firestore.DistanceMeasureEuclidean, nil).Documents(ctx).GetAll()
	wantCode(t, err, codes.FailedPrecondition, "Missing vector index configuration. Please create the required index with the following gcloud command: gcloud firestore indexes composite create --project=demo-loupe --collection-group=docs --query-scope=COLLECTION --field-config=vector-config='{\"dimension\":\"2\",\"flat\": \"{}\"}',field-path=other")

	// The admin endpoint lists declared, built and missing indexes.
	resp, err := http.Get(inst.URL + "/emulator/v1/projects/demo-loupe/databases/(default)/indexes")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Declared []json.RawMessage
		Built    []struct{ CollectionGroup string }
		Missing  []struct {
			Index struct {
				CollectionGroup string
				Fields          []struct{ FieldPath, Order string }
			}
			Link    string
			Queries int
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || len(st.Declared) != 2 || len(st.Built) == 0 || len(st.Missing) != 5 {
		t.Fatalf("indexes endpoint: %+v %v", st, err)
	}
	m := st.Missing[0]
	if m.Index.CollectionGroup != "cities" || len(m.Index.Fields) != 3 || m.Index.Fields[0].FieldPath != "country" || m.Queries != 1 || !strings.HasPrefix(m.Link, "https://console.firebase.google.com/") {
		t.Errorf("first missing index: %+v", m)
	}
}

// TestConformance_MissingIndexesLoggedAndWritten: without --enforce-indexes
// the query runs, the index it needed is logged once, and `loupe indexes
// missing --write` merges it into firestore.indexes.json.
func TestConformance_MissingIndexesLoggedAndWritten(t *testing.T) {
	ctx := context.Background()
	inst, c, dir := startWithIndexes(t)
	q := c.Collection("cities").Where("country", "==", "US").OrderBy("population", firestore.Desc)
	for range 2 {
		if got := ids(t, q); got != "ny,la,sf" {
			t.Fatalf("unenforced query: %q", got)
		}
	}
	if _, err := c.Collection("cities").Where("population", ">", 1).OrderBy("state", firestore.Asc).Documents(ctx).GetAll(); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, c.CollectionGroup("cities").Where("country", "==", "US")); got != "la,ny,sf" {
		t.Fatalf("unenforced collection group query: %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(inst.Log(), "does not declare") < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // the log reaches the test through a pipe
	}
	if n := strings.Count(inst.Log(), "does not declare"); n != 3 {
		t.Errorf("logged %d times, want once per index:\n%s", n, inst.Log())
	}

	out, err := exec.Command(loupetest.Binary(t), "indexes", "missing", "--emulator", inst.Host).Output()
	if err != nil || !strings.Contains(string(out), `"fieldPath": "country"`) {
		t.Errorf("indexes missing: %s %v", out, err)
	}
	cmd := exec.Command(loupetest.Binary(t), "indexes", "missing", "--emulator", inst.Host, "--write", "--config", filepath.Join(dir, "firebase.json"))
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "added 3 index(es)") {
		t.Fatalf("indexes missing --write: %s %v", out, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "firestore.indexes.json"))
	var file struct {
		Indexes []struct {
			CollectionGroup string
			Fields          []struct{ FieldPath, Order string }
		}
		FieldOverrides []struct {
			FieldPath string
			Indexes   []struct{ Order, ArrayConfig, QueryScope string }
		}
	}
	if err := json.Unmarshal(data, &file); err != nil || len(file.Indexes) != 4 {
		t.Fatalf("written file: %s %v", data, err)
	}
	if f := file.Indexes[3].Fields; len(f) != 3 || f[0].FieldPath != "state" || f[1].FieldPath != "population" || f[2].FieldPath != "__name__" {
		t.Errorf("inequality index: %+v", file.Indexes[3])
	}
	if o := file.FieldOverrides; len(o) != 2 || o[1].FieldPath != "country" || len(o[1].Indexes) != 4 || o[1].Indexes[3].QueryScope != "COLLECTION_GROUP" {
		t.Errorf("written field overrides (the automatic indexes kept, the collection group one added): %+v", o)
	}

	// A restart with the written file enforces nothing more.
	cfg := filepath.Join(dir, "firebase.json")
	inst2 := loupetest.Start(t, loupetest.Options{InMemory: true, Config: cfg, Args: []string{"--enforce-indexes"}})
	c2 := newClient(t, inst2)
	for _, q := range []firestore.Query{
		c2.Collection("cities").Where("country", "==", "US").OrderBy("population", firestore.Desc),
		c2.CollectionGroup("cities").Where("country", "==", "US"),
		c2.Collection("cities").Where("country", "==", "US"),
	} {
		if _, err := q.Documents(ctx).GetAll(); err != nil {
			t.Errorf("after --write: %v", err)
		}
	}
}
