package exports

import (
	"bytes"
	"flag"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/exports/entitypb"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/storage"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

var update = flag.Bool("update", false, "rewrite the fixtures under testdata written by loupe")

// fixtureTime is when the fixtures' exports were taken.
var fixtureTime = time.Date(2026, 11, 24, 0, 0, 0, 123456000, time.UTC)

func val(v any) *pb.Value {
	switch x := v.(type) {
	case nil:
		return &pb.Value{ValueType: &pb.Value_NullValue{NullValue: structpb.NullValue_NULL_VALUE}}
	case bool:
		return &pb.Value{ValueType: &pb.Value_BooleanValue{BooleanValue: x}}
	case int:
		return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: int64(x)}}
	case float64:
		return &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: x}}
	case string:
		return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: x}}
	case []byte:
		return &pb.Value{ValueType: &pb.Value_BytesValue{BytesValue: x}}
	case time.Time:
		return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: timestamppb.New(x)}}
	case *latlng.LatLng:
		return &pb.Value{ValueType: &pb.Value_GeoPointValue{GeoPointValue: x}}
	case ref:
		return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: string(x)}}
	case []any:
		arr := &pb.ArrayValue{}
		for _, e := range x {
			arr.Values = append(arr.Values, val(e))
		}
		return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: arr}}
	case map[string]any:
		return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: fields(x)}}}
	}
	panic("unknown value")
}

type ref string

func fields(m map[string]any) map[string]*pb.Value {
	out := map[string]*pb.Value{}
	for k, v := range m {
		out[k] = val(v)
	}
	return out
}

// fixtureDocs are the documents of the Firestore fixtures, in project:
// every value type, a subcollection and a second database.
func fixtureDocs(project string) []*pb.Document {
	db := "projects/" + project + "/databases/(default)/documents/"
	ts := timestamppb.New(fixtureTime)
	doc := func(name string, f map[string]any) *pb.Document {
		return &pb.Document{Name: name, Fields: fields(f), CreateTime: ts, UpdateTime: ts}
	}
	return []*pb.Document{
		doc(db+"users/ada", map[string]any{
			"null": nil, "yes": true, "no": false, "int": math.MinInt64, "big": math.MaxInt64,
			"pi": 3.14159, "inf": math.Inf(-1), "zero": 0.0,
			"name": "Ada Lovelace", "empty": "", "unicode": "héllo 🌍",
			"bytes": []byte{0, 1, 2, 0xff, 0xfe}, "noBytes": []byte{},
			"born":      time.Date(1815, 12, 10, 8, 30, 0, 123456000, time.UTC),
			"epoch":     time.Unix(0, 0).UTC(),
			"where":     &latlng.LatLng{Latitude: 51.5072, Longitude: -0.1276},
			"friend":    ref(db + "users/grace"),
			"elsewhere": ref("projects/" + project + "/databases/analytics/documents/events/e1"),
			"tags":      []any{"math", 1, true, nil, 2.5, []byte("b")},
			"noTags":    []any{},
			"address": map[string]any{
				"city": "London", "geo": &latlng.LatLng{Latitude: -33.9, Longitude: 151.2},
				"lines": []any{"12 St James's Square", map[string]any{"floor": 2, "rooms": []any{}}},
				"inner": map[string]any{"deeper": map[string]any{"deepest": "yes"}},
				"none":  map[string]any{},
			},
			"history":   []any{map[string]any{"year": 1843, "what": "notes"}, map[string]any{"year": 1833}},
			"embedding": map[string]any{"__type__": "__vector__", "value": []any{0.25, -1.5, 3.0}},
		}),
		doc(db+"users/ada/posts/first", map[string]any{"title": "Sketch of the Analytical Engine", "author": ref(db + "users/ada")}),
		doc(db+"users/grace", map[string]any{"name": "Grace Hopper"}),
		doc(db+"cities/sf", map[string]any{"population": 808437, "mayor": nil}),
		doc("projects/"+project+"/databases/analytics/documents/events/e1", map[string]any{"kind": "visit"}),
	}
}

// writeManagedFixture writes docs as a production managed export of the
// collections users, posts and cities (`gcloud firestore export
// --collection-ids=…`): NAME/NAME.overall_export_metadata and one
// all_namespaces/kind_X folder per collection id.
func writeManagedFixture(t *testing.T, dir string, docs []*pb.Document) {
	name := filepath.Base(dir)
	overall := &entitypb.OverallExportMetadata{}
	for _, kind := range []string{"users", "posts", "cities", "events"} {
		var records [][]byte
		for _, d := range docs {
			if _, _, path, _ := splitName(d.Name); path[len(path)-2] == kind {
				rec, err := encodeEntity(d)
				if err != nil {
					t.Fatal(err)
				}
				records = append(records, rec)
			}
		}
		kindDir := filepath.Join(dir, "all_namespaces", "kind_"+kind)
		if err := os.MkdirAll(kindDir, 0o755); err != nil {
			t.Fatal(err)
		}
		size, err := writeLog(filepath.Join(kindDir, "output-0"), records)
		if err != nil {
			t.Fatal(err)
		}
		km, _ := proto.Marshal(&entitypb.ExportMetadata{
			Header:  &entitypb.ExportMetadata_Header{Name: proto.String(name), StartMicros: proto.Int64(fixtureTime.UnixMicro()), EndMicros: proto.Int64(fixtureTime.UnixMicro())},
			Outputs: []*entitypb.ExportMetadata_Outputs{{Kind: proto.String(kind), File: []string{"output-0"}}},
		})
		metaName := "all_namespaces_kind_" + kind + ".export_metadata"
		if err := os.WriteFile(filepath.Join(kindDir, metaName), km, 0o644); err != nil {
			t.Fatal(err)
		}
		overall.Entry = append(overall.Entry, &entitypb.OverallExportMetadata_Entry{
			Spec: &entitypb.OverallExportMetadata_Entry_Spec{A: proto.Int32(2), C: proto.Int32(3)},
			Path: proto.String("all_namespaces/kind_" + kind + "/" + metaName), Entities: proto.Int64(int64(len(records))), Bytes: proto.Int64(size),
		})
	}
	om, _ := proto.Marshal(overall)
	if _, err := writeLog(filepath.Join(dir, name+".overall_export_metadata"), [][]byte{[]byte(overallVersion), om}); err != nil {
		t.Fatal(err)
	}
}

const managedFixture = "testdata/managed/2026-11-24T00_00_00_12345"

func TestManagedExportImportsEveryValueType(t *testing.T) {
	if *update {
		os.RemoveAll(managedFixture)
		writeManagedFixture(t, managedFixture, fixtureDocs("prod-project"))
	}
	p, err := Prepare(managedFixture, "demo-loupe")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Layout != LayoutManaged {
		t.Errorf("layout %q, want %q", p.Layout, LayoutManaged)
	}
	got, err := firestore.ReadExport(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	// The export's project becomes the serving one, references included.
	assertDocs(t, got, fixtureDocs("demo-loupe"))
}

func assertDocs(t *testing.T, got, want []*pb.Document) {
	t.Helper()
	sortDocs(want)
	sortDocs(got)
	if len(got) != len(want) {
		t.Fatalf("%d documents, want %d", len(got), len(want))
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("document differs:\nwant %v\ngot  %v", prototext.Format(want[i]), prototext.Format(got[i]))
		}
	}
}

func sortDocs(d []*pb.Document) {
	slices.SortFunc(d, func(a, b *pb.Document) int { return strings.Compare(a.Name, b.Name) })
}

const emulatorFixture = "testdata/emulator"

// writeLoupeFixture writes loupe's layout of the fixture: the documents, the
// Auth and Storage exports firebase-tools wrote.
func writeLoupeFixture(t *testing.T, dir string) {
	if err := firestore.WriteExport(dir, fixtureDocs("demo-loupe")); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare("testdata/firebase-tools", "demo-loupe")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := os.CopyFS(dir, os.DirFS(p.Dir)); err != nil {
		t.Fatal(err)
	}
}

// TestEmulatorExportRoundTrips: the firebase emulators:export fixture
// (written by ToFirebase) imports, exports again byte for byte, and
// re-imports to the same content.
func TestEmulatorExportRoundTrips(t *testing.T) {
	if *update {
		src := t.TempDir()
		writeLoupeFixture(t, src)
		os.RemoveAll(emulatorFixture)
		if err := ToFirebase(src, emulatorFixture, fixtureTime); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Prepare(emulatorFixture, "demo-loupe")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Layout != LayoutEmulator {
		t.Errorf("layout %q, want %q", p.Layout, LayoutEmulator)
	}
	docs, err := firestore.ReadExport(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	assertDocs(t, docs, fixtureDocs("demo-loupe"))

	again := t.TempDir()
	if err := ToFirebase(p.Dir, again, fixtureTime); err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, emulatorFixture, again)

	p2, err := Prepare(again, "demo-loupe")
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	assertSameTree(t, p.Dir, p2.Dir)
}

// assertSameTree compares two folders file by file, byte for byte.
func assertSameTree(t *testing.T, want, got string) {
	t.Helper()
	files := func(root string) map[string][]byte {
		out := map[string][]byte{}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if rel == "README.md" {
				return nil
			}
			data, err := os.ReadFile(path)
			out[filepath.ToSlash(rel)] = data
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	w, g := files(want), files(got)
	for name, data := range w {
		if gd, ok := g[name]; !ok {
			t.Errorf("%s is missing", name)
		} else if !bytes.Equal(gd, data) {
			t.Errorf("%s differs:\nwant %q\ngot  %q", name, data, gd)
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			t.Errorf("%s is extra", name)
		}
	}
}

// TestFirebaseToolsExportImports reads what firebase-tools itself wrote.
func TestFirebaseToolsExportImports(t *testing.T) {
	p, err := Prepare("testdata/firebase-tools", "demo-loupe")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	want, _ := os.ReadFile("testdata/firebase-tools/auth_export/accounts.json")
	got, err := os.ReadFile(filepath.Join(p.Dir, "auth_export", "accounts.json"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("accounts.json: %v\n%s", err, got)
	}
	buckets, objects, err := storage.ReadExport(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"demo-fixture-extra", "demo-fixture.appspot.com"}; !slices.Equal(buckets, want) {
		t.Errorf("buckets %q, want %q", buckets, want)
	}
	type seen struct{ Bucket, Name, Type, Content, Tokens, Owner, CacheControl string }
	var all []seen
	for _, o := range objects {
		content, _ := os.ReadFile(o.Content)
		all = append(all, seen{o.Bucket, o.Name, o.ContentType, string(content), strings.Join(o.Tokens(), ","), o.Metadata["owner"], o.CacheControl})
	}
	wantObjects := []seen{
		{"demo-fixture-extra", "a/b/c.json", "application/json", `{"x":1}`, "", "", ""},
		{"demo-fixture.appspot.com", "images/pixel.bin", "application/octet-stream", "\x00\x01\x02\xff", "", "", "no-cache"},
		{"demo-fixture.appspot.com", "notes/hello world.txt", "text/plain", "hello from firebase-tools\n", "tok-1", "ada", ""},
	}
	if !slices.Equal(all, wantObjects) {
		t.Errorf("objects:\n%+v\nwant\n%+v", all, wantObjects)
	}
	for _, o := range objects {
		if o.Size == 0 || len(o.MD5) != 16 || o.CRC32C == 0 || o.Created.IsZero() || o.Generation == 0 {
			t.Errorf("%s: metadata incomplete: %+v", o.Name, o.Object)
		}
	}

	// Exported in Firebase's layout and imported again, it is the same.
	again := t.TempDir()
	if err := ToFirebase(p.Dir, again, fixtureTime); err != nil {
		t.Fatal(err)
	}
	p2, err := Prepare(again, "demo-loupe")
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	assertSameTree(t, p.Dir, p2.Dir)
}

func TestDamagedExportNamesFileAndOffset(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(emulatorFixture)); err != nil {
		t.Fatal(err)
	}
	output := filepath.Join(dir, "firestore_export", "all_namespaces", "all_kinds", "output-0")
	data, _ := os.ReadFile(output)
	data[len(data)/2] ^= 0x40
	if err := os.WriteFile(output, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Prepare(dir, "demo-loupe")
	if err == nil || !strings.Contains(err.Error(), output) || !strings.Contains(err.Error(), "offset 0") {
		t.Fatalf("Prepare of a damaged export: %v", err)
	}
	if err := os.WriteFile(output, data[:len(data)/3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(dir, "demo-loupe"); err == nil || !strings.Contains(err.Error(), output) {
		t.Fatalf("Prepare of a truncated export: %v", err)
	}
}

func TestDamagedLoupeExportFailsBeforeAnyChange(t *testing.T) {
	dir := t.TempDir()
	writeLoupeFixture(t, dir)
	if _, err := Prepare(dir, "demo-loupe"); err != nil {
		t.Fatalf("a whole export: %v", err)
	}
	docs := filepath.Join(dir, "firestore_export", "documents.jsonl")
	data, _ := os.ReadFile(docs)
	if err := os.WriteFile(docs, append(data, "{not json\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(dir, "demo-loupe"); err == nil || !strings.Contains(err.Error(), docs) || !strings.Contains(err.Error(), "line 6") {
		t.Fatalf("Prepare of a damaged documents.jsonl: %v", err)
	}
}

func TestUnknownLayoutSaysWhatItFound(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"backup.sql", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Prepare(dir, "demo-loupe")
	if err == nil || !strings.Contains(err.Error(), "backup.sql, notes.txt") || !strings.Contains(err.Error(), "no export layout") {
		t.Fatalf("Prepare: %v", err)
	}
	p, err := Prepare(t.TempDir(), "demo-loupe")
	if err != nil || p.Layout != LayoutLoupe {
		t.Fatalf("an empty folder: %v %+v", err, p)
	}
	// The folder above a managed export (the bucket prefix) points at it.
	parent := t.TempDir()
	if err := os.CopyFS(filepath.Join(parent, "2026-11-24"), os.DirFS(managedFixture)); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(parent, "demo-loupe"); err == nil || !strings.Contains(err.Error(), filepath.Join(parent, "2026-11-24")+" holds a Firestore export") {
		t.Fatalf("Prepare of a managed export's parent: %v", err)
	}
}

// vec is a vector as the SDKs send it.
func vec(elems ...float64) map[string]any {
	values := []any{}
	for _, e := range elems {
		values = append(values, e)
	}
	return map[string]any{"__type__": "__vector__", "value": values}
}

// TestVectorsInExports: a vector field is written as Datastore writes a
// vector, one VECTOR property per element, and read back as the vector;
// one with no elements or inside an array keeps the API's map form, which
// reads back as the vector too, as do VECTOR properties within a map.
func TestVectorsInExports(t *testing.T) {
	name := "projects/p/databases/(default)/documents/items/a"
	ts := timestamppb.New(fixtureTime)
	doc := &pb.Document{Name: name, CreateTime: ts, UpdateTime: ts, Fields: fields(map[string]any{
		"embedding": vec(0.25, -1.5, 3),
		"nested":    map[string]any{"e": vec(0.5), "other": vec(1, 2)},
		"empty":     vec(),
		"inList":    []any{1.0, vec(2, 3)},
		"notVector": map[string]any{"__type__": "__other__", "value": []any{1.0}},
	})}
	rec, err := encodeEntity(doc)
	if err != nil {
		t.Fatal(err)
	}
	e := &entitypb.EntityProto{}
	if err := proto.Unmarshal(rec, e); err != nil {
		t.Fatal(err)
	}
	var elems []float64
	for _, p := range e.RawProperty {
		if p.GetName() == "embedding" {
			if p.GetMeaning() != entitypb.Property_VECTOR || !p.GetMultiple() || p.GetValue().DoubleValue == nil {
				t.Errorf("embedding written as %v", p)
			}
			elems = append(elems, p.GetValue().GetDoubleValue())
		}
	}
	if !slices.Equal(elems, []float64{0.25, -1.5, 3}) {
		t.Errorf("embedding's elements %v", elems)
	}
	got, err := decodeEntity(rec)
	if err != nil {
		t.Fatal(err)
	}
	assertDocs(t, toDocuments([]entityDoc{got}, "p", fixtureTime), []*pb.Document{doc})

	// Written as the API's map (loupe's exports before vectors were
	// VECTOR properties), a vector reads back the same.
	inner := &entitypb.EntityProto{Key: &entitypb.Reference{App: proto.String(""), Path: &entitypb.Path{}}, EntityGroup: &entitypb.Path{}}
	if err := encodeFields(inner, fields(vec(0.25, -1.5, 3))); err != nil {
		t.Fatal(err)
	}
	raw, _ := proto.Marshal(inner)
	asMap := &entitypb.EntityProto{Key: e.Key, EntityGroup: e.EntityGroup, RawProperty: []*entitypb.Property{{
		Name: proto.String("embedding"), Multiple: proto.Bool(false), Meaning: entitypb.Property_ENTITY_PROTO.Enum(),
		Value: &entitypb.PropertyValue{StringValue: raw}}}}
	rec, _ = proto.Marshal(asMap)
	if got, err := decodeEntity(rec); err != nil || !proto.Equal(got.fields["embedding"], val(vec(0.25, -1.5, 3))) {
		t.Errorf("a vector in the map form reads as %v (%v)", got.fields["embedding"], err)
	}

	for _, bad := range []*entitypb.EntityProto{
		{Key: e.Key, RawProperty: []*entitypb.Property{{Name: proto.String("v"), Multiple: proto.Bool(true), Meaning: entitypb.Property_VECTOR.Enum(),
			Value: &entitypb.PropertyValue{Int64Value: proto.Int64(1)}}}},
		{Key: e.Key, RawProperty: []*entitypb.Property{
			{Name: proto.String("v"), Multiple: proto.Bool(false), Value: &entitypb.PropertyValue{Int64Value: proto.Int64(1)}},
			{Name: proto.String("v"), Multiple: proto.Bool(true), Meaning: entitypb.Property_VECTOR.Enum(), Value: &entitypb.PropertyValue{DoubleValue: proto.Float64(1)}}}},
		{Key: e.Key, RawProperty: []*entitypb.Property{
			{Name: proto.String("v"), Multiple: proto.Bool(true), Meaning: entitypb.Property_VECTOR.Enum(), Value: &entitypb.PropertyValue{DoubleValue: proto.Float64(1)}},
			{Name: proto.String("v"), Multiple: proto.Bool(true), Value: &entitypb.PropertyValue{DoubleValue: proto.Float64(2)}}}},
	} {
		rec, _ := proto.Marshal(bad)
		if d, err := decodeEntity(rec); err == nil {
			t.Errorf("%v decoded as %v", bad, d.fields)
		}
	}
}
