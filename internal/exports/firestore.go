package exports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/exports/entitypb"
	"github.com/syndtr/goleveldb/leveldb/journal"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// overallVersion is the first record of an .overall_export_metadata file.
const overallVersion = "3"

// unmarshal reads export protos leniently about required fields, which the
// writers always set but this reader does not need (the log's checksums
// catch damage).
var unmarshal = proto.UnmarshalOptions{AllowPartial: true}

// blockSize is the LevelDB log's block size: errors name the block they are in.
const blockSize = 32 << 10

// entityDoc is a document read from an export, before its project is known.
type entityDoc struct {
	app, database string
	path          []string
	fields        map[string]*pb.Value
}

// readManagedExport reads the Firestore export whose overall metadata file is
// overall (a managed export's or the Firestore emulator's): every entity of
// every output file its .export_metadata files list. It returns the
// documents and the export's end time (zero when the export does not say).
func readManagedExport(overall string) ([]entityDoc, time.Time, error) {
	root := filepath.Dir(overall)
	var meta *entitypb.OverallExportMetadata
	err := readLog(overall, func(i int, rec []byte) error {
		if i == 0 && isVersion(rec) {
			return nil
		}
		m := &entitypb.OverallExportMetadata{}
		if err := unmarshal.Unmarshal(rec, m); err != nil {
			return err
		}
		meta = m
		return nil
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	if meta == nil {
		return nil, time.Time{}, fmt.Errorf("%s: no metadata record", overall)
	}
	var docs []entityDoc
	var end time.Time
	for _, e := range meta.Entry {
		kindMeta, err := inside(root, e.GetPath())
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("%s: %w", overall, err)
		}
		data, err := os.ReadFile(kindMeta)
		if err != nil {
			return nil, time.Time{}, err
		}
		km := &entitypb.ExportMetadata{}
		if err := unmarshal.Unmarshal(data, km); err != nil {
			return nil, time.Time{}, fmt.Errorf("%s: %w", kindMeta, err)
		}
		if t := km.GetHeader().GetEndMicros(); t > 0 && time.UnixMicro(t).After(end) {
			end = time.UnixMicro(t)
		}
		for _, o := range km.Outputs {
			for _, name := range o.File {
				out, err := inside(filepath.Dir(kindMeta), name)
				if err != nil {
					return nil, time.Time{}, fmt.Errorf("%s: %w", kindMeta, err)
				}
				err = readLog(out, func(_ int, rec []byte) error {
					d, err := decodeEntity(rec)
					if err == nil {
						docs = append(docs, d)
					}
					return err
				})
				if err != nil {
					return nil, time.Time{}, err
				}
			}
		}
	}
	return docs, end, nil
}

// isVersion reports whether rec is the format-version record that opens an
// overall metadata file (the Firestore emulator writes "3").
func isVersion(rec []byte) bool {
	return len(rec) > 0 && len(rec) <= 4 && strings.Trim(string(rec), "0123456789") == ""
}

// inside resolves rel (with "/" or "\" separators) under root, refusing
// paths that leave it.
func inside(root, rel string) (string, error) {
	rel = strings.ReplaceAll(rel, `\`, "/")
	if rel == "" || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf("export file %q is outside the export", rel)
	}
	return filepath.Join(root, filepath.FromSlash(rel)), nil
}

// countingReader counts the bytes the log reader has consumed.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readLog calls fn with each record of the LevelDB log file at path. Errors
// name the file, the record and the offset of the 32 KiB block it is in.
func readLog(path string, fn func(i int, rec []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	cr := &countingReader{r: f}
	jr := journal.NewReader(cr, nil, true, true)
	for i := 0; ; i++ {
		r, err := jr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var rec []byte
		if err == nil {
			rec, err = io.ReadAll(r)
		}
		if err == nil {
			err = fn(i, rec)
		}
		if err != nil {
			block := max(cr.n-1, 0) / blockSize * blockSize
			return fmt.Errorf("%s: record %d (in the block at offset %d): %w", path, i, block, err)
		}
	}
}

// decodeEntity turns one output record into a document.
func decodeEntity(rec []byte) (entityDoc, error) {
	e := &entitypb.EntityProto{}
	if err := unmarshal.Unmarshal(rec, e); err != nil {
		return entityDoc{}, err
	}
	key := e.GetKey()
	elems := key.GetPath().GetElement()
	if len(elems) == 0 {
		return entityDoc{}, errors.New("entity without a key")
	}
	d := entityDoc{app: projectOfApp(key.GetApp()), database: key.GetDatabaseId()}
	path, err := pathOf(elems)
	if err != nil {
		return entityDoc{}, err
	}
	d.path = path
	fields, err := decodeProperties(e)
	if err != nil {
		return entityDoc{}, fmt.Errorf("document %s: %w", strings.Join(d.path, "/"), err)
	}
	d.fields = fields
	return d, nil
}

// projectOfApp strips the partition prefix ("s~", "dev~") of an app id.
func projectOfApp(app string) string {
	if _, p, ok := strings.Cut(app, "~"); ok {
		return p
	}
	return app
}

// pathOf is a key's path: collection and document ids in turn. Numeric ids
// (of Datastore-mode databases) have no Firestore document name loupe
// accepts, so they are an error.
func pathOf[E interface {
	GetType() string
	GetName() string
	GetId() int64
}](elems []E) ([]string, error) {
	var path []string
	for _, el := range elems {
		if el.GetName() == "" {
			return nil, fmt.Errorf("key %s has a numeric id %d (a Datastore-mode export), which Firestore documents cannot have", strings.Join(append(path, el.GetType()), "/"), el.GetId())
		}
		path = append(path, el.GetType(), el.GetName())
	}
	return path, nil
}

// decodeProperties gathers an entity's properties into Firestore fields:
// repeated (multiple) properties of one name become an array, and VECTOR
// ones a vector.
func decodeProperties(e *entitypb.EntityProto) (map[string]*pb.Value, error) {
	fields := map[string]*pb.Value{}
	vectors := map[string]bool{}
	for _, p := range slices.Concat(e.Property, e.RawProperty) {
		name := p.GetName()
		if p.GetMeaning() == entitypb.Property_VECTOR {
			if _, dup := fields[name]; dup && !vectors[name] {
				return nil, fmt.Errorf("field %q appears twice", name)
			}
			if v := p.GetValue(); v == nil || v.DoubleValue == nil {
				return nil, fmt.Errorf("field %q: a vector element that is not a double", name)
			}
			if !vectors[name] {
				vectors[name] = true
				fields[name] = emptyVector()
			}
			arr := fields[name].GetMapValue().Fields[vectorValueKey].GetArrayValue()
			arr.Values = append(arr.Values, &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: p.GetValue().GetDoubleValue()}})
			continue
		}
		if vectors[name] {
			return nil, fmt.Errorf("field %q appears twice", name)
		}
		v, err := decodeValue(p)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		if !p.GetMultiple() {
			if _, dup := fields[name]; dup {
				return nil, fmt.Errorf("field %q appears twice", name)
			}
			fields[name] = v
			continue
		}
		arr := fields[name].GetArrayValue()
		if arr == nil {
			if _, dup := fields[name]; dup {
				return nil, fmt.Errorf("field %q appears twice", name)
			}
			arr = &pb.ArrayValue{}
			fields[name] = &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: arr}}
		}
		arr.Values = append(arr.Values, v)
	}
	return fields, nil
}

// decodeValue is one property's value as a Firestore value.
func decodeValue(p *entitypb.Property) (*pb.Value, error) {
	v := p.GetValue()
	if v == nil {
		v = &entitypb.PropertyValue{} // no value: null
	}
	switch {
	case p.GetMeaning() == entitypb.Property_EMPTY_LIST:
		return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{}}}, nil
	case p.GetMeaning() == entitypb.Property_ENTITY_PROTO:
		inner := &entitypb.EntityProto{}
		if err := unmarshal.Unmarshal(v.GetStringValue(), inner); err != nil {
			return nil, err
		}
		fields, err := decodeProperties(inner)
		if err != nil {
			return nil, err
		}
		return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: fields}}}, nil
	case v.Int64Value != nil && p.GetMeaning() == entitypb.Property_GD_WHEN:
		return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: timestamppb.New(time.UnixMicro(v.GetInt64Value()))}}, nil
	case v.Int64Value != nil:
		return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: v.GetInt64Value()}}, nil
	case v.BooleanValue != nil:
		return &pb.Value{ValueType: &pb.Value_BooleanValue{BooleanValue: v.GetBooleanValue()}}, nil
	case v.DoubleValue != nil:
		return &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: v.GetDoubleValue()}}, nil
	case v.Pointvalue != nil:
		return &pb.Value{ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{Latitude: v.Pointvalue.GetX(), Longitude: v.Pointvalue.GetY()}}}, nil
	case v.Referencevalue != nil:
		r := v.Referencevalue
		if len(r.Pathelement) == 0 {
			return nil, errors.New("reference without a path")
		}
		ref := entityDoc{app: projectOfApp(r.GetApp()), database: r.GetDatabaseId()}
		path, err := pathOf(r.Pathelement)
		if err != nil {
			return nil, err
		}
		ref.path = path
		// The project is filled in once the export's project is mapped.
		return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: refPlaceholder(ref)}}, nil
	case v.StringValue != nil:
		s := v.GetStringValue()
		if m := p.GetMeaning(); m == entitypb.Property_BLOB || m == entitypb.Property_BYTESTRING || !utf8.Valid(s) {
			return &pb.Value{ValueType: &pb.Value_BytesValue{BytesValue: bytes.Clone(s)}}, nil
		}
		return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: string(s)}}, nil
	}
	return &pb.Value{ValueType: &pb.Value_NullValue{}}, nil
}

// refPlaceholder writes a reference with its export project as
// "\x00app\x00database\x00path", resolved by resolveRefs once the target
// project is known ("\x00" never occurs in a resource name).
func refPlaceholder(d entityDoc) string {
	return "\x00" + d.app + "\x00" + d.database + "\x00" + strings.Join(d.path, "/")
}

// resolveRefs rewrites the placeholders of refPlaceholder in fields into
// resource names, mapping projects through project.
func resolveRefs(fields map[string]*pb.Value, project func(string) string) {
	var walk func(v *pb.Value)
	walk = func(v *pb.Value) {
		switch t := v.ValueType.(type) {
		case *pb.Value_ReferenceValue:
			parts := strings.SplitN(t.ReferenceValue, "\x00", 4)
			if len(parts) == 4 && parts[0] == "" {
				t.ReferenceValue = documentName(project(parts[1]), parts[2], parts[3])
			}
		case *pb.Value_ArrayValue:
			for _, e := range t.ArrayValue.Values {
				walk(e)
			}
		case *pb.Value_MapValue:
			for _, e := range t.MapValue.Fields {
				walk(e)
			}
		}
	}
	for _, v := range fields {
		walk(v)
	}
}

func documentName(project, database, path string) string {
	if database == "" {
		database = "(default)"
	}
	return "projects/" + project + "/databases/" + database + "/documents/" + path
}

// toDocuments gives the documents read from an export their names: when the
// whole export is of one project (as every export Firebase writes is), it
// becomes project; otherwise each keeps its own. Every document gets
// createTime and updateTime at.
func toDocuments(docs []entityDoc, project string, at time.Time) []*pb.Document {
	apps := map[string]bool{}
	for _, d := range docs {
		apps[d.app] = true
	}
	mapProject := func(app string) string {
		if len(apps) == 1 && apps[app] {
			return project
		}
		return app
	}
	ts := timestamppb.New(at)
	out := make([]*pb.Document, 0, len(docs))
	for _, d := range docs {
		resolveRefs(d.fields, mapProject)
		out = append(out, &pb.Document{
			Name:       documentName(mapProject(d.app), d.database, strings.Join(d.path, "/")),
			Fields:     d.fields,
			CreateTime: ts,
			UpdateTime: ts,
		})
	}
	return out
}

// writeManagedExport writes docs as a Firestore export under dir, named name:
// dir/name.overall_export_metadata and one output file under
// all_namespaces/all_kinds, as the Firestore emulator writes them.
func writeManagedExport(dir, name string, docs []*pb.Document, at time.Time) error {
	kindDir := filepath.Join(dir, "all_namespaces", "all_kinds")
	if err := os.MkdirAll(kindDir, 0o755); err != nil {
		return err
	}
	docs = append([]*pb.Document(nil), docs...)
	sort.Slice(docs, func(i, j int) bool { return docs[i].Name < docs[j].Name })
	var records [][]byte
	for _, d := range docs {
		rec, err := encodeEntity(d)
		if err != nil {
			return fmt.Errorf("document %s: %w", d.Name, err)
		}
		records = append(records, rec)
	}
	output := filepath.Join(kindDir, "output-0")
	size, err := writeLog(output, records)
	if err != nil {
		return err
	}
	km, err := proto.Marshal(&entitypb.ExportMetadata{
		Header:  &entitypb.ExportMetadata_Header{Name: proto.String(name), StartMicros: proto.Int64(at.UnixMicro()), EndMicros: proto.Int64(at.UnixMicro())},
		Outputs: []*entitypb.ExportMetadata_Outputs{{Kind: proto.String(""), File: []string{"output-0"}}},
	})
	if err != nil {
		return err
	}
	const kindMeta = "all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata"
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(kindMeta)), km, 0o644); err != nil {
		return err
	}
	om, err := proto.Marshal(&entitypb.OverallExportMetadata{Entry: []*entitypb.OverallExportMetadata_Entry{{
		Spec:     &entitypb.OverallExportMetadata_Entry_Spec{A: proto.Int32(2), C: proto.Int32(3)},
		Path:     proto.String(kindMeta),
		Entities: proto.Int64(int64(len(docs))),
		Bytes:    proto.Int64(size),
	}}})
	if err != nil {
		return err
	}
	_, err = writeLog(filepath.Join(dir, name+".overall_export_metadata"), [][]byte{[]byte(overallVersion), om})
	return err
}

// writeLog writes records as a LevelDB log file and returns its size.
func writeLog(path string, records [][]byte) (int64, error) {
	var buf bytes.Buffer
	w := journal.NewWriter(&buf)
	for _, r := range records {
		jw, err := w.Next()
		if err != nil {
			return 0, err
		}
		if _, err := jw.Write(r); err != nil {
			return 0, err
		}
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return int64(buf.Len()), os.WriteFile(path, buf.Bytes(), 0o644)
}

// encodeEntity is a document as an export record.
func encodeEntity(d *pb.Document) ([]byte, error) {
	project, database, path, err := splitName(d.Name)
	if err != nil {
		return nil, err
	}
	key := keyOf(project, database, path)
	e := &entitypb.EntityProto{Key: key, EntityGroup: &entitypb.Path{Element: key.Path.Element[:1]}}
	if err := encodeFields(e, d.Fields); err != nil {
		return nil, err
	}
	return proto.Marshal(e)
}

// splitName splits "projects/p/databases/d/documents/a/b" into p, d and a/b.
func splitName(name string) (project, database string, path []string, err error) {
	parts := strings.Split(name, "/")
	if len(parts) < 7 || len(parts)%2 == 0 || parts[0] != "projects" || parts[2] != "databases" || parts[4] != "documents" {
		return "", "", nil, fmt.Errorf("%q is not a document name", name)
	}
	return parts[1], parts[3], parts[5:], nil
}

func keyOf(project, database string, path []string) *entitypb.Reference {
	ref := &entitypb.Reference{App: proto.String("dev~" + project), Path: &entitypb.Path{}}
	if database != "(default)" {
		ref.DatabaseId = proto.String(database)
	}
	for i := 0; i+1 < len(path); i += 2 {
		ref.Path.Element = append(ref.Path.Element, &entitypb.Path_Element{Type: proto.String(path[i]), Name: proto.String(path[i+1])})
	}
	return ref
}

// encodeFields adds fields, sorted by name, to e as properties: an empty
// array as an (indexed) EMPTY_LIST property, every other value among the
// raw properties, as the Firestore emulator writes them. A vector field is
// written as Datastore writes one, a VECTOR property per element; a vector
// with no elements, or one inside an array (whose elements would mix with
// the array's), is written as the map the API carries.
func encodeFields(e *entitypb.EntityProto, fields map[string]*pb.Value) error {
	for _, n := range sortedKeys(fields) {
		v := fields[n]
		if elems, ok := vectorElements(v); ok && len(elems) > 0 {
			for _, x := range elems {
				e.RawProperty = append(e.RawProperty, &entitypb.Property{Name: proto.String(n), Multiple: proto.Bool(true),
					Meaning: entitypb.Property_VECTOR.Enum(), Value: &entitypb.PropertyValue{DoubleValue: proto.Float64(x)}})
			}
			continue
		}
		if arr, ok := v.ValueType.(*pb.Value_ArrayValue); ok {
			if len(arr.ArrayValue.GetValues()) == 0 {
				e.Property = append(e.Property, &entitypb.Property{Name: proto.String(n), Multiple: proto.Bool(false), Meaning: entitypb.Property_EMPTY_LIST.Enum(), Value: &entitypb.PropertyValue{}})
				continue
			}
			for _, el := range arr.ArrayValue.Values {
				if _, nested := el.ValueType.(*pb.Value_ArrayValue); nested {
					return fmt.Errorf("field %q: an array directly inside an array", n)
				}
				p, err := encodeValue(n, true, el)
				if err != nil {
					return err
				}
				e.RawProperty = append(e.RawProperty, p)
			}
			continue
		}
		p, err := encodeValue(n, false, v)
		if err != nil {
			return err
		}
		e.RawProperty = append(e.RawProperty, p)
	}
	return nil
}

// encodeValue is one (non-array) value as a property.
func encodeValue(name string, multiple bool, v *pb.Value) (*entitypb.Property, error) {
	p := &entitypb.Property{Name: proto.String(name), Multiple: proto.Bool(multiple), Value: &entitypb.PropertyValue{}}
	pv := p.Value
	switch t := v.ValueType.(type) {
	case *pb.Value_NullValue:
	case *pb.Value_BooleanValue:
		pv.BooleanValue = proto.Bool(t.BooleanValue)
	case *pb.Value_IntegerValue:
		pv.Int64Value = proto.Int64(t.IntegerValue)
	case *pb.Value_DoubleValue:
		pv.DoubleValue = proto.Float64(t.DoubleValue)
	case *pb.Value_TimestampValue:
		ts := t.TimestampValue
		if ts.GetSeconds() > math.MaxInt64/1_000_000 || ts.GetSeconds() < math.MinInt64/1_000_000 {
			return nil, fmt.Errorf("field %q: timestamp out of range", name)
		}
		pv.Int64Value = proto.Int64(ts.GetSeconds()*1e6 + int64(ts.GetNanos())/1e3)
		p.Meaning = entitypb.Property_GD_WHEN.Enum()
	case *pb.Value_StringValue:
		pv.StringValue = []byte(t.StringValue)
	case *pb.Value_BytesValue:
		pv.StringValue = bytes.Clone(t.BytesValue)
		if pv.StringValue == nil {
			pv.StringValue = []byte{}
		}
		p.Meaning = entitypb.Property_BYTESTRING.Enum()
	case *pb.Value_GeoPointValue:
		pv.Pointvalue = &entitypb.PropertyValue_PointValue{X: proto.Float64(t.GeoPointValue.GetLatitude()), Y: proto.Float64(t.GeoPointValue.GetLongitude())}
		p.Meaning = entitypb.Property_GEORSS_POINT.Enum()
	case *pb.Value_ReferenceValue:
		project, database, path, err := splitName(t.ReferenceValue)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		key := keyOf(project, database, path)
		ref := &entitypb.PropertyValue_ReferenceValue{App: key.App, DatabaseId: key.DatabaseId}
		for _, el := range key.Path.Element {
			ref.Pathelement = append(ref.Pathelement, &entitypb.PropertyValue_ReferenceValue_PathElement{Type: el.Type, Id: el.Id, Name: el.Name})
		}
		pv.Referencevalue = ref
	case *pb.Value_MapValue:
		inner := &entitypb.EntityProto{Key: &entitypb.Reference{App: proto.String(""), Path: &entitypb.Path{}}, EntityGroup: &entitypb.Path{}}
		if err := encodeFields(inner, t.MapValue.GetFields()); err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		raw, err := proto.Marshal(inner)
		if err != nil {
			return nil, err
		}
		pv.StringValue = raw
		p.Meaning = entitypb.Property_ENTITY_PROTO.Enum()
	default:
		return nil, fmt.Errorf("field %q: unsupported value %T", name, v.ValueType)
	}
	return p, nil
}

// A vector is a map of exactly these fields: {__type__: "__vector__",
// value: [doubles]}.
const (
	vectorTypeKey   = "__type__"
	vectorTypeValue = "__vector__"
	vectorValueKey  = "value"
)

// vectorElements returns the elements of v when it is a vector.
func vectorElements(v *pb.Value) ([]float64, bool) {
	fields := v.GetMapValue().GetFields()
	if len(fields) != 2 || fields[vectorTypeKey].GetStringValue() != vectorTypeValue {
		return nil, false
	}
	arr, ok := fields[vectorValueKey].GetValueType().(*pb.Value_ArrayValue)
	if !ok {
		return nil, false
	}
	elems := make([]float64, 0, len(arr.ArrayValue.GetValues()))
	for _, x := range arr.ArrayValue.GetValues() {
		d, ok := x.GetValueType().(*pb.Value_DoubleValue)
		if !ok {
			return nil, false
		}
		elems = append(elems, d.DoubleValue)
	}
	return elems, true
}

// emptyVector is a vector with no elements yet.
func emptyVector() *pb.Value {
	return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{
		vectorTypeKey:  {ValueType: &pb.Value_StringValue{StringValue: vectorTypeValue}},
		vectorValueKey: {ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{}}},
	}}}}
}
