package firestore

import (
	"cmp"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
)

// Firestore encodes a vector as a map holding exactly these two fields:
// {__type__: "__vector__", value: [doubles]}.
const (
	vectorTypeKey   = "__type__"
	vectorTypeValue = "__vector__"
	vectorValueKey  = "value"
)

// IsVector reports whether v is a map that Firestore reads as a vector: its
// __type__ field is the string "__vector__", as the SDKs detect it.
func IsVector(v *pb.Value) bool {
	m := v.GetMapValue()
	if m == nil {
		return false
	}
	t, ok := m.GetFields()[vectorTypeKey].GetValueType().(*pb.Value_StringValue)
	return ok && t.StringValue == vectorTypeValue
}

// vectorOf encodes elements as a vector value.
func vectorOf(elems []*pb.Value) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{
		vectorTypeKey:  {ValueType: &pb.Value_StringValue{StringValue: vectorTypeValue}},
		vectorValueKey: arrayValue(elems),
	}}}}
}

// vectorElements returns the elements of a vector value.
func vectorElements(v *pb.Value) []*pb.Value {
	return v.GetMapValue().GetFields()[vectorValueKey].GetArrayValue().GetValues()
}

// compareVectors orders vectors as Firestore does: by dimension first, then
// element by element.
func compareVectors(a, b *pb.Value) int {
	ea, eb := vectorElements(a), vectorElements(b)
	if c := cmp.Compare(len(ea), len(eb)); c != 0 {
		return c
	}
	return compareArrays(ea, eb)
}

// validateVector checks a map whose __type__ field marks it as a vector: it
// must hold only __type__ and value, and value must be an array of doubles.
// field is the dotted path of the map in its document, for the message.
func validateVector(v *pb.Value, field string) error {
	fields := v.GetMapValue().GetFields()
	for k := range fields {
		if k != vectorTypeKey && k != vectorValueKey {
			return errorf(errs.InvalidArgument, "Vector field %q has an unexpected field %q: a vector holds only %q and %q.", field, k, vectorTypeKey, vectorValueKey)
		}
	}
	arr := fields[vectorValueKey].GetArrayValue()
	if arr == nil {
		return errorf(errs.InvalidArgument, "Vector field %q must have a %q field holding an array of doubles.", field, vectorValueKey)
	}
	for i, e := range arr.GetValues() {
		if _, ok := e.GetValueType().(*pb.Value_DoubleValue); !ok {
			return errorf(errs.InvalidArgument, "Vector field %q must hold only doubles: element %d is not a double.", field, i)
		}
	}
	return nil
}

// reservedName reports whether a field name is reserved (__…__).
func reservedName(k string) bool {
	return len(k) >= 4 && strings.HasPrefix(k, "__") && strings.HasSuffix(k, "__")
}
