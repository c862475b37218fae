package firestore

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The engine's comparators must be strict weak orders: its B-trees, sorts
// and binary searches all assume it. These tests draw values where orders
// tend to break (numbers at the int64 edges and NaN, numeric document ids
// and ids that are prefixes of them, nested values) and check every
// comparator on every pair and triple: each element equals itself,
// swapping the operands flips the sign, and ≤ is transitive (which makes
// equality transitive too).

// genOrder draws values for the comparator checks.
type genOrder struct{ r *rand.Rand }

func (g genOrder) pick(options ...string) string { return options[g.r.IntN(len(options))] }

// segment draws a document or collection id.
func (g genOrder) segment() string {
	return g.pick("", "a", "b", "A", "12", "2", "__id", "__id5__", "__id12__", "__id-3__", "__id05__", "__id-0__", "__id0__",
		"__id9223372036854775807__", "__id-9223372036854775808__", "__id7__x", "__id1", "é", "z\u00ff", "😀", "a b", "~")
}

// path draws a path under documents/ of one to five segments.
func (g genOrder) path() string {
	segments := make([]string, 1+g.r.IntN(5))
	for i := range segments {
		segments[i] = g.segment()
	}
	return strings.Join(segments, "/")
}

// name draws a full resource name, from one of two databases.
func (g genOrder) name() string {
	return "projects/p/databases/" + g.pick("(default)", "d2") + "/documents/" + g.path()
}

// value draws a value of any type, nesting arrays and maps up to depth.
func (g genOrder) value(depth int) *pb.Value {
	kinds := 11
	if depth <= 0 {
		kinds = 8 // no arrays, vectors or maps
	}
	switch g.r.IntN(kinds) {
	case 0:
		return nullValue()
	case 1:
		return &pb.Value{ValueType: &pb.Value_BooleanValue{BooleanValue: g.r.IntN(2) == 0}}
	case 2:
		ints := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 53, -1, 0, 1, 2, 1 << 53, 1<<53 + 1, math.MaxInt64 - 1000, math.MaxInt64 - 1, math.MaxInt64}
		return intValue(ints[g.r.IntN(len(ints))])
	case 3:
		doubles := []float64{math.NaN(), math.Inf(-1), -1e300, -0x1p63 - 2048, -0x1p63, -0x1p63 + 1024, -1.5, math.Copysign(0, -1), 0, 0.5, 1, 2,
			0x1p53, 0x1p53 + 2, 0x1p63 - 1024, 0x1p63, 0x1p63 + 2048, 1e300, math.Inf(1), math.SmallestNonzeroFloat64}
		return doubleValue(doubles[g.r.IntN(len(doubles))])
	case 4:
		return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{Seconds: int64(g.r.IntN(3)) - 1, Nanos: int32(g.r.IntN(3)) * 500_000_000}}}
	case 5:
		return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: g.segment()}}
	case 6:
		if g.r.IntN(2) == 0 {
			return &pb.Value{ValueType: &pb.Value_BytesValue{BytesValue: []byte(g.segment())}}
		}
		return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: g.name()}}
	case 7:
		coords := []float64{-90, -1, 0, 1, 90, -180, 180}
		return &pb.Value{ValueType: &pb.Value_GeoPointValue{GeoPointValue: &latlng.LatLng{Latitude: coords[g.r.IntN(5)], Longitude: coords[g.r.IntN(len(coords))]}}}
	case 8:
		elems := make([]*pb.Value, g.r.IntN(3))
		for i := range elems {
			elems[i] = g.value(depth - 1)
		}
		return arrayValue(elems)
	case 9:
		elems := make([]*pb.Value, g.r.IntN(3))
		for i := range elems {
			elems[i] = doubleValue(float64(g.r.IntN(3)))
		}
		return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{
			vectorTypeKey:  {ValueType: &pb.Value_StringValue{StringValue: vectorTypeValue}},
			vectorValueKey: arrayValue(elems),
		}}}}
	default:
		fields := map[string]*pb.Value{}
		for range g.r.IntN(3) {
			fields[g.pick("a", "b", "A", "é", "")] = g.value(depth - 1)
		}
		return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: fields}}}
	}
}

// checkOrder fails t unless compare is a strict weak order over items.
func checkOrder[T any](t *testing.T, what string, items []T, compare func(a, b T) int, show func(T) string) {
	t.Helper()
	sign := func(c int) int { return min(max(c, -1), 1) }
	for _, a := range items {
		if c := compare(a, a); c != 0 {
			t.Fatalf("%s: %s compares %d with itself", what, show(a), c)
		}
		for _, b := range items {
			ab := compare(a, b)
			if sign(ab) != -sign(compare(b, a)) {
				t.Fatalf("%s: %s vs %s is %d, but the other way %d", what, show(a), show(b), ab, compare(b, a))
			}
			if ab > 0 {
				continue
			}
			for _, c := range items {
				if compare(b, c) <= 0 && compare(a, c) > 0 {
					t.Fatalf("%s: not transitive: %s ≤ %s ≤ %s, but %s > %s", what, show(a), show(b), show(c), show(a), show(c))
				}
			}
		}
	}
}

// checkComparators checks every comparator of the engine over values drawn
// from seed.
func checkComparators(t *testing.T, seed uint64) {
	g := genOrder{rand.New(rand.NewPCG(seed, seed>>32|1))}
	const n = 36
	showValue := func(v *pb.Value) string { return fmt.Sprint(v) }

	values := make([]*pb.Value, n)
	for i := range values {
		values[i] = g.value(2)
	}
	checkOrder(t, "Compare", values, Compare, showValue)

	names := make([]string, n)
	for i := range names {
		if i%2 == 0 {
			names[i] = g.name()
		} else {
			names[i] = g.path()
		}
	}
	checkOrder(t, "compareReferences", names, compareReferences, func(s string) string { return s })

	// Index rows, in scoped and unscoped indexes, with and without a prefix
	// field, and the seek bounds scans look rows up with.
	rows := make([]indexEntry, n)
	for i := range rows {
		var prefix, value *pb.Value
		if g.r.IntN(2) == 0 {
			prefix = g.value(1)
		}
		switch g.r.IntN(4) {
		case 0:
		case 1:
			value = valueLast
		default:
			value = g.value(1)
		}
		rows[i] = rowOf(g.path(), prefix, value)
		if g.r.IntN(4) == 0 {
			rows[i].seek = seekBound(g.r.IntN(3) - 1)
			rows[i].path = rows[i].collection()
		}
	}
	showRow := func(en indexEntry) string {
		return fmt.Sprintf("{%v %v %q seek %d}", en.prefix, en.value, en.path, en.seek)
	}
	for _, scoped := range []bool{false, true} {
		ix := newFieldIndex(indexSpec{field: "f", scoped: scoped}, FieldPath{"f"})
		less := func(a, b indexEntry) int {
			switch {
			case ix.less(a, b):
				return -1
			case ix.less(b, a):
				return 1
			}
			return 0
		}
		checkOrder(t, fmt.Sprintf("index rows (scoped %v)", scoped), rows, less, showRow)
	}

	// Documents in query order, ascending and descending, with the name last.
	docs := make([]*pb.Document, n)
	for i := range docs {
		docs[i] = &pb.Document{Name: g.name(), Fields: map[string]*pb.Value{"a": g.value(1), "b": g.value(1)}}
	}
	orders := []order{{FieldPath{"a"}, false}, {FieldPath{"b"}, true}, {nameField, g.r.IntN(2) == 0}}
	checkOrder(t, "compareDocs", docs, func(a, b *pb.Document) int { return compareDocs(a, b, orders) }, func(d *pb.Document) string { return fmt.Sprint(d) })

	// Vector search hits, nearest first.
	for _, measure := range []pb.StructuredQuery_FindNearest_DistanceMeasure{pb.StructuredQuery_FindNearest_EUCLIDEAN, pb.StructuredQuery_FindNearest_DOT_PRODUCT} {
		top := &topK{n: &nearest{measure: measure}}
		hits := make([]hit, n)
		for i := range hits {
			dists := []float64{math.Inf(-1), -1, math.Copysign(0, -1), 0, 0.5, 1, math.Inf(1)}
			hits[i] = hit{name: g.name(), dist: dists[g.r.IntN(len(dists))]}
		}
		checkOrder(t, "nearest hits", hits, top.before, func(h hit) string { return fmt.Sprintf("%s@%v", h.name, h.dist) })
	}
}

func TestComparatorsAreStrictWeakOrders(t *testing.T) {
	for seed := range uint64(8) {
		checkComparators(t, seed)
	}
}

// FuzzComparators checks the comparators over values drawn from a fuzzed
// seed; its seed corpus runs with the unit tests.
func FuzzComparators(f *testing.F) {
	f.Add(uint64(0))
	f.Add(uint64(28))
	f.Add(uint64(1) << 40)
	f.Fuzz(func(t *testing.T, seed uint64) {
		checkComparators(t, seed)
	})
}

// TestCompareReferences_DocumentIDOrder pins the order of ids the SDKs'
// comparators give (numeric ids first, by number; then UTF-8 bytes), among
// them the ids that used to make a cycle: __id < __id5__ < 12 < __id; and
// the empty segment of a seek bound ("a/") before every id.
func TestCompareReferences_DocumentIDOrder(t *testing.T) {
	ordered := []string{"", "__id-9223372036854775808__", "__id-3__", "__id-0__", "__id0__", "__id05__", "__id5__", "__id12__", "__id9223372036854775807__",
		"12", "2", "A", "__id", "__id1", "__id7__x", "a", "a/", "a/__id1__", "a/b", "a/x", "a b", "é", "😀"}
	for i, a := range ordered {
		for j, b := range ordered {
			if got, want := compareReferences(a, b), cmp.Compare(i, j); got != want {
				t.Errorf("compareReferences(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}
