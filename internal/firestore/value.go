package firestore

import (
	"bytes"
	"cmp"
	"math"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// The ranks of value types in Firestore's total order. The BSON types of
// Enterprise edition (bson.go) sort among them: MinKey right after null,
// Int32 and Decimal128 with the numbers, and MaxKey after everything.
const (
	rankNull = iota
	rankMinKey
	rankBool
	rankNumber
	rankTimestamp
	rankBSONTimestamp
	rankString
	rankBytes
	rankBinary
	rankReference
	rankObjectID
	rankGeoPoint
	rankRegex
	rankArray
	rankVector
	rankMap
	rankMaxKey
)

// typeOrder ranks value types in Firestore's total order:
// null < booleans < numbers < timestamps < strings < bytes < references <
// geopoints < arrays < vectors < maps, with the BSON types between them.
func typeOrder(v *pb.Value) int {
	switch v.GetValueType().(type) {
	case *pb.Value_NullValue:
		return rankNull
	case *pb.Value_BooleanValue:
		return rankBool
	case *pb.Value_IntegerValue, *pb.Value_DoubleValue:
		return rankNumber
	case *pb.Value_TimestampValue:
		return rankTimestamp
	case *pb.Value_StringValue:
		return rankString
	case *pb.Value_BytesValue:
		return rankBytes
	case *pb.Value_ReferenceValue:
		return rankReference
	case *pb.Value_GeoPointValue:
		return rankGeoPoint
	case *pb.Value_ArrayValue:
		return rankArray
	case *pb.Value_MapValue:
		if IsVector(v) {
			return rankVector
		}
		if r, ok := bsonRank(v); ok {
			return r
		}
		return rankMap
	}
	return rankNull
}

// isIntOrDouble reports whether v is one of the numbers sums, increments
// and transforms work on (not a BSON Int32 or Decimal128).
func isIntOrDouble(v *pb.Value) bool {
	switch v.GetValueType().(type) {
	case *pb.Value_IntegerValue, *pb.Value_DoubleValue:
		return true
	}
	return false
}

// Compare orders two values by Firestore's total order: -1, 0 or 1. Within
// numbers, NaN sorts first and integers, doubles, Int32s and Decimal128s
// compare by value.
func Compare(a, b *pb.Value) int {
	ta, tb := typeOrder(a), typeOrder(b)
	if ta != tb {
		return cmp.Compare(ta, tb)
	}
	switch ta {
	case rankNull, rankMinKey, rankMaxKey:
		return 0
	case rankBool:
		return cmpBool(a.GetBooleanValue(), b.GetBooleanValue())
	case rankNumber:
		if isBSON(a) || isBSON(b) {
			return compareBSONNumbers(a, b)
		}
		return compareNumbers(a, b)
	case rankTimestamp:
		sa, sb := a.GetTimestampValue(), b.GetTimestampValue()
		if c := cmp.Compare(sa.GetSeconds(), sb.GetSeconds()); c != 0 {
			return c
		}
		return cmp.Compare(sa.GetNanos(), sb.GetNanos())
	case rankString:
		return strings.Compare(a.GetStringValue(), b.GetStringValue())
	case rankBytes:
		return bytes.Compare(a.GetBytesValue(), b.GetBytesValue())
	case rankReference:
		return compareReferences(a.GetReferenceValue(), b.GetReferenceValue())
	case rankGeoPoint:
		ga, gb := a.GetGeoPointValue(), b.GetGeoPointValue()
		if c := cmp.Compare(ga.GetLatitude(), gb.GetLatitude()); c != 0 {
			return c
		}
		return cmp.Compare(ga.GetLongitude(), gb.GetLongitude())
	case rankArray:
		return compareArrays(a.GetArrayValue().GetValues(), b.GetArrayValue().GetValues())
	case rankVector:
		return compareVectors(a, b)
	case rankMap:
		return compareMaps(a.GetMapValue().GetFields(), b.GetMapValue().GetFields())
	}
	return compareBSON(ta, a, b)
}

func compareNumbers(a, b *pb.Value) int {
	ai, aInt := a.GetValueType().(*pb.Value_IntegerValue)
	bi, bInt := b.GetValueType().(*pb.Value_IntegerValue)
	switch {
	case aInt && bInt:
		return cmp.Compare(ai.IntegerValue, bi.IntegerValue)
	case aInt:
		return -compareIntFloat(b.GetDoubleValue(), ai.IntegerValue)
	case bInt:
		return compareIntFloat(a.GetDoubleValue(), bi.IntegerValue)
	default:
		return cmp.Compare(a.GetDoubleValue(), b.GetDoubleValue())
	}
}

// compareIntFloat compares a double with an integer exactly, NaN first.
func compareIntFloat(f float64, i int64) int {
	if math.IsNaN(f) {
		return -1
	}
	// Past the int64 range the double decides (and converting it would
	// overflow); -2^63 itself is an int64.
	if f < math.MinInt64 {
		return -1
	}
	if f >= 0x1p63 {
		return 1
	}
	if c := cmp.Compare(f, float64(i)); c != 0 {
		return c
	}
	// Equal as doubles: compare exactly through the integer part.
	fi := int64(f)
	if c := cmp.Compare(fi, i); c != 0 {
		return c
	}
	return cmp.Compare(f-float64(fi), 0)
}

// compareReferences orders resource names (or paths under documents/) as
// Firestore orders document references: segment by segment, a name that is
// a prefix of another first. Within a segment, numeric ids
// ("__id<int64>__", see numericID) come before every other id, by number
// (two spellings of one number by their bytes), and other ids compare by
// their UTF-8 bytes. It is a total order on all strings and allocates
// nothing.
func compareReferences(a, b string) int {
	// Skip the segments both share.
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return 0
	}
	start := strings.LastIndexByte(a[:i], '/') + 1
	a, b = a[start:], b[start:]
	for {
		segA, restA, moreA := strings.Cut(a, "/")
		segB, restB, moreB := strings.Cut(b, "/")
		if c := compareSegments(segA, segB); c != 0 {
			return c
		}
		if !moreA || !moreB {
			return cmpBool(moreA, moreB)
		}
		a, b = restA, restB
	}
}

// compareSegments orders two segments of a name: numeric ids first, by
// number, then the others by their bytes. No name has an empty segment;
// seek bounds ending in "/" use one, which sorts before every id.
func compareSegments(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "":
		return -1
	case b == "":
		return 1
	}
	na, numA := numericID(a)
	nb, numB := numericID(b)
	switch {
	case numA && numB:
		if c := cmp.Compare(na, nb); c != 0 {
			return c
		}
	case numA != numB:
		return cmpBool(numB, numA)
	}
	return strings.Compare(a, b)
}

func compareArrays(a, b []*pb.Value) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func compareMaps(a, b map[string]*pb.Value) int {
	ak, bk := sortedKeys(a), sortedKeys(b)
	for i := 0; i < len(ak) && i < len(bk); i++ {
		if c := strings.Compare(ak[i], bk[i]); c != 0 {
			return c
		}
		if c := Compare(a[ak[i]], b[bk[i]]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(ak), len(bk))
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// equalForQuery is equality as filters see it: same type class, equal by
// Compare, and NaN equals nothing (queries use IS_NAN for that).
func equalForQuery(a, b *pb.Value) bool {
	if isNaN(a) || isNaN(b) {
		return false
	}
	return typeOrder(a) == typeOrder(b) && Compare(a, b) == 0
}

func isNaN(v *pb.Value) bool {
	d, ok := v.GetValueType().(*pb.Value_DoubleValue)
	return ok && math.IsNaN(d.DoubleValue)
}

func isNull(v *pb.Value) bool {
	_, ok := v.GetValueType().(*pb.Value_NullValue)
	return ok
}

// ValueSize estimates a value's storage size as Firestore counts it.
func ValueSize(v *pb.Value) int {
	switch x := v.GetValueType().(type) {
	case *pb.Value_StringValue:
		return len(x.StringValue) + 1
	case *pb.Value_BytesValue:
		return len(x.BytesValue)
	case *pb.Value_ReferenceValue:
		return len(x.ReferenceValue) + 1
	case *pb.Value_GeoPointValue:
		return 16
	case *pb.Value_TimestampValue:
		return 8
	case *pb.Value_ArrayValue:
		n := 0
		for _, e := range x.ArrayValue.GetValues() {
			n += ValueSize(e)
		}
		return n
	case *pb.Value_MapValue:
		return fieldsSize(x.MapValue.GetFields())
	case *pb.Value_BooleanValue, *pb.Value_NullValue:
		return 1
	}
	return 8
}

func fieldsSize(fields map[string]*pb.Value) int {
	n := 0
	for k, v := range fields {
		n += len(k) + 1 + ValueSize(v)
	}
	return n
}

// depth is the nesting depth of maps and arrays in a value (a scalar is 0).
func depth(v *pb.Value) int {
	d := 0
	switch x := v.GetValueType().(type) {
	case *pb.Value_ArrayValue:
		for _, e := range x.ArrayValue.GetValues() {
			d = max(d, depth(e))
		}
		return d + 1
	case *pb.Value_MapValue:
		for _, e := range x.MapValue.GetFields() {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}
