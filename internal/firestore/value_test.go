package firestore

import (
	"math"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func str(s string) *pb.Value { return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: s}} }

// TestCompare_TotalOrder lists values in Firestore's order: each must sort
// strictly before the next.
func TestCompare_TotalOrder(t *testing.T) {
	ordered := []*pb.Value{
		nullValue(),
		{ValueType: &pb.Value_BooleanValue{BooleanValue: false}},
		{ValueType: &pb.Value_BooleanValue{BooleanValue: true}},
		doubleValue(math.NaN()),
		doubleValue(math.Inf(-1)),
		intValue(math.MinInt64),
		doubleValue(-1.5),
		intValue(-1),
		intValue(0),
		doubleValue(0.5),
		intValue(1),
		doubleValue(1.5),
		doubleValue(0x1p63 - 1024),
		intValue(math.MaxInt64),
		doubleValue(0x1p63), // above every int64, though MaxInt64 converts to it
		doubleValue(math.Inf(1)),
		{ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{Seconds: 1}}},
		{ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{Seconds: 1, Nanos: 1000}}},
		str(""),
		str("Z"),
		str("a"),
		str("é"),
		{ValueType: &pb.Value_BytesValue{BytesValue: []byte{0}}},
		{ValueType: &pb.Value_ReferenceValue{ReferenceValue: "projects/p/databases/d/documents/a/b"}},
		{ValueType: &pb.Value_ReferenceValue{ReferenceValue: "projects/p/databases/d/documents/a/b/c/d"}},
		{ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{Latitude: -10, Longitude: 5}}},
		{ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{Latitude: 10, Longitude: -5}}},
		arrayValue(nil),
		arrayValue([]*pb.Value{intValue(1)}),
		arrayValue([]*pb.Value{intValue(1), intValue(0)}),
		arrayValue([]*pb.Value{intValue(2)}),
		vectorValue(),
		vectorValue(5),
		vectorValue(1, 2),
		vectorValue(1, 3),
		vectorValue(0, 0, 0),
		{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{}}},
		{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{"a": intValue(1)}}}},
		{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{"b": intValue(0)}}}},
	}
	for i := 0; i+1 < len(ordered); i++ {
		a, b := ordered[i], ordered[i+1]
		if Compare(a, b) >= 0 || Compare(b, a) <= 0 {
			t.Errorf("want %v < %v", a, b)
		}
	}
	if Compare(intValue(1), doubleValue(1)) != 0 || Compare(doubleValue(math.NaN()), doubleValue(math.NaN())) != 0 {
		t.Error("1 == 1.0 and NaN == NaN in ordering")
	}
	if equalForQuery(doubleValue(math.NaN()), doubleValue(math.NaN())) {
		t.Error("NaN must not equal NaN in filters")
	}
}

func TestParseFieldPath(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "a", want: "a"},
		{in: "a.b_c.d1", want: "a.b_c.d1"},
		{in: "`a.b`.c", want: "`a.b`.c"},
		{in: "`back\\`tick`", want: "`back\\`tick`"},
		{in: "`with space`", want: "`with space`"},
		{in: "", err: "the path is empty"},
		// Production's words (quoted from its answers in public issues).
		{in: "a..b", err: `Invalid property path "a..b".`},
		{in: ".a", err: `Invalid property path ".a".`},
		{in: "a-b", err: `Invalid property path "a-b".`},
		{in: "`open", err: "Invalid property path \"`open\"."},
		{in: "24_hours", err: `Invalid property path "24_hours".`},
	} {
		got, err := ParseFieldPath(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.HasPrefix(tc.err, "Invalid") && err.Error() != tc.err {
				t.Errorf("ParseFieldPath(%q) error = %v, want %q", tc.in, err, tc.err)
			}
		case err != nil || got.String() != tc.want:
			t.Errorf("ParseFieldPath(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestParseName(t *testing.T) {
	for _, tc := range []struct {
		in  string
		ok  bool
		doc bool
	}{
		{"projects/p/databases/(default)/documents/users/u1", true, true},
		{"projects/p/databases/(default)/documents/users", true, false},
		{"projects/p/databases/(default)/documents", true, false},
		{"projects/p/databases/(default)/documents/users/..", false, false},
		{"projects/p/databases/(default)/documents/users/__x__", false, false},
		{"projects/p/databases/(default)/documents/users//u1", false, false},
		{"projects/p/databases/(default)", false, false},
		{"users/u1", false, false},
	} {
		n, err := ParseName(tc.in)
		if (err == nil) != tc.ok || (err == nil && n.IsDocument() != tc.doc) {
			t.Errorf("ParseName(%q) = %+v, %v", tc.in, n, err)
		}
	}
}

// FuzzParseFieldPath checks that every path that parses renders back to
// itself after a second parse, and that nothing panics.
func FuzzParseFieldPath(f *testing.F) {
	for _, s := range []string{"a", "a.b", "`a.b`.c", "`x\\`y`", "a..b", "`", "é", "__name__"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseFieldPath(s)
		if err != nil {
			return
		}
		again, err := ParseFieldPath(p.String())
		if err != nil || again.String() != p.String() {
			t.Fatalf("%q → %q does not round-trip: %v", s, p.String(), err)
		}
	})
}

// FuzzDocumentJSON decodes documents as the REST and WebChannel transports
// do and runs them through validation and ordering: no input may panic.
func FuzzDocumentJSON(f *testing.F) {
	for _, s := range []string{
		`{"name":"projects/p/databases/d/documents/a/b","fields":{"x":{"integerValue":"1"}}}`,
		`{"fields":{"m":{"mapValue":{"fields":{"y":{"arrayValue":{"values":[{"doubleValue":"NaN"}]}}}}}}}`,
		`{"fields":{"t":{"timestampValue":"2025-01-05T00:00:00Z"},"g":{"geoPointValue":{"latitude":1}}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc := &pb.Document{}
		if protojson.Unmarshal([]byte(s), doc) != nil {
			return
		}
		if doc.Name == "" {
			doc.Name = "projects/p/databases/d/documents/a/b"
		}
		_ = validateFields(doc.Fields, doc.Name, true)
		_ = checkLimits(doc)
		for _, v := range doc.Fields {
			for _, w := range doc.Fields {
				if Compare(v, w) != -Compare(w, v) {
					t.Fatalf("Compare is not antisymmetric on %v, %v", v, w)
				}
			}
		}
	})
}

// vectorValue encodes a vector as the SDKs send it.
func vectorValue(elems ...float64) *pb.Value {
	vals := make([]*pb.Value, len(elems))
	for i, e := range elems {
		vals[i] = doubleValue(e)
	}
	return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{
		"__type__": str("__vector__"),
		"value":    arrayValue(vals),
	}}}}
}
