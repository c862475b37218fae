package pipeline

import (
	"fmt"
	"math"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
)

// val is what an expression evaluates to: a value, absent (v and err nil:
// a field that is not there), or an error value.
type val struct {
	v   *pb.Value
	err *evalError
}

// evalError is an error value: the message the request fails with if it
// reaches a stage's output, as INVALID_ARGUMENT, or the error of a
// subquery or a limit (cause), which the request fails with as it is.
type evalError struct {
	msg   string
	cause error
}

// asError is the error the request fails with.
func (e *evalError) asError() error {
	if e.cause != nil {
		return e.cause
	}
	return invalid("%s", e.msg)
}

var absent = val{}

func of(v *pb.Value) val { return val{v: v} }

func failf(format string, args ...any) val {
	return val{err: &evalError{msg: fmt.Sprintf(format, args...)}}
}

// failWith is the error value of err, which the request fails with as it
// is (a subquery's PERMISSION_DENIED stays one).
func failWith(err error) val { return val{err: &evalError{msg: err.Error(), cause: err}} }

func (x val) isAbsent() bool { return x.v == nil && x.err == nil }
func (x val) isError() bool  { return x.err != nil }
func (x val) isNull() bool   { return x.v != nil && isNull(x.v) }

// Value constructors.
var (
	nullV  = &pb.Value{ValueType: &pb.Value_NullValue{}}
	trueV  = &pb.Value{ValueType: &pb.Value_BooleanValue{BooleanValue: true}}
	falseV = &pb.Value{ValueType: &pb.Value_BooleanValue{BooleanValue: false}}
)

func boolV(b bool) *pb.Value {
	if b {
		return trueV
	}
	return falseV
}
func intV(i int64) *pb.Value      { return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: i}} }
func doubleV(f float64) *pb.Value { return &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: f}} }
func stringV(s string) *pb.Value  { return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: s}} }
func bytesV(b []byte) *pb.Value   { return &pb.Value{ValueType: &pb.Value_BytesValue{BytesValue: b}} }
func arrayV(vs []*pb.Value) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: vs}}}
}
func mapV(fields map[string]*pb.Value) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: fields}}}
}
func refV(name string) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: name}}
}

func isNull(v *pb.Value) bool {
	_, ok := v.GetValueType().(*pb.Value_NullValue)
	return ok
}

func isNaN(v *pb.Value) bool {
	d, ok := v.GetValueType().(*pb.Value_DoubleValue)
	return ok && math.IsNaN(d.DoubleValue)
}

// kind is a value's type as pipelines name it.
type kind int

const (
	kNull kind = iota
	kBoolean
	kInt
	kDouble
	kTimestamp
	kString
	kBytes
	kReference
	kGeoPoint
	kArray
	kVector
	kMap
	kInt32
	kDecimal128
	kObjectID
	kBSONTimestamp
	kRegex
	kBinary
	kMinKey
	kMaxKey
)

// kindOf classifies a value; BSON values are maps of one reserved key.
func kindOf(v *pb.Value) kind {
	switch t := v.GetValueType().(type) {
	case *pb.Value_NullValue:
		return kNull
	case *pb.Value_BooleanValue:
		return kBoolean
	case *pb.Value_IntegerValue:
		return kInt
	case *pb.Value_DoubleValue:
		return kDouble
	case *pb.Value_TimestampValue:
		return kTimestamp
	case *pb.Value_StringValue:
		return kString
	case *pb.Value_BytesValue:
		return kBytes
	case *pb.Value_ReferenceValue:
		return kReference
	case *pb.Value_GeoPointValue:
		return kGeoPoint
	case *pb.Value_ArrayValue:
		return kArray
	case *pb.Value_MapValue:
		if firestore.IsVector(v) {
			return kVector
		}
		if k, ok := bsonKind(t.MapValue.GetFields()); ok {
			return k
		}
		return kMap
	}
	return kNull
}

// bsonKind recognises the MongoDB-compatible types, stored as a map with
// one reserved key.
func bsonKind(fields map[string]*pb.Value) (kind, bool) {
	if len(fields) != 1 {
		return 0, false
	}
	for k, v := range fields {
		switch k {
		case "__int__":
			_, ok := v.GetValueType().(*pb.Value_IntegerValue)
			return kInt32, ok
		case "__decimal128__":
			_, ok := v.GetValueType().(*pb.Value_StringValue)
			return kDecimal128, ok
		case "__oid__":
			_, ok := v.GetValueType().(*pb.Value_StringValue)
			return kObjectID, ok
		case "__request_timestamp__":
			return kBSONTimestamp, v.GetMapValue() != nil
		case "__regex__":
			return kRegex, v.GetMapValue() != nil
		case "__binary__":
			_, ok := v.GetValueType().(*pb.Value_BytesValue)
			return kBinary, ok
		case "__min__":
			return kMinKey, isNull(v)
		case "__max__":
			return kMaxKey, isNull(v)
		}
	}
	return 0, false
}

// typeName is the name the type function gives a kind.
var typeName = map[kind]string{
	kNull: "null", kBoolean: "boolean", kInt: "int64", kDouble: "float64", kTimestamp: "timestamp",
	kString: "string", kBytes: "bytes", kReference: "reference", kGeoPoint: "geo_point", kArray: "array",
	kVector: "vector", kMap: "map", kInt32: "int32", kDecimal128: "decimal128", kObjectID: "object_id",
	kBSONTimestamp: "bson_timestamp", kRegex: "regex", kBinary: "bson_binary_data", kMinKey: "min_key", kMaxKey: "max_key",
}

// wireName is how an error message names the type an argument had.
var wireName = map[kind]string{
	kNull: "NULL", kBoolean: "BOOLEAN", kInt: "INT64", kDouble: "DOUBLE", kTimestamp: "TIMESTAMP",
	kString: "STRING", kBytes: "BYTES", kReference: "REFERENCE", kGeoPoint: "GEO_POINT", kArray: "ARRAY",
	kVector: "VECTOR", kMap: "MAP", kInt32: "INT32", kDecimal128: "DECIMAL128", kObjectID: "OBJECT_ID",
	kBSONTimestamp: "BSON_TIMESTAMP", kRegex: "REGEX", kBinary: "BSON_BINARY", kMinKey: "MIN_KEY", kMaxKey: "MAX_KEY",
}

func gotName(x val) string {
	switch {
	case x.isAbsent():
		return "ABSENT"
	case x.isError():
		return "ERROR"
	}
	return wireName[kindOf(x.v)]
}

func isNumber(v *pb.Value) bool {
	switch v.GetValueType().(type) {
	case *pb.Value_IntegerValue, *pb.Value_DoubleValue:
		return true
	}
	return false
}

// toFloat is a number's value as a double.
func toFloat(v *pb.Value) float64 {
	if i, ok := v.GetValueType().(*pb.Value_IntegerValue); ok {
		return float64(i.IntegerValue)
	}
	return v.GetDoubleValue()
}

// equal is pipelines' equality: Firestore's value equality, where NaN
// equals NaN and integers equal doubles of the same value.
func equal(a, b *pb.Value) bool {
	if kindOf(a) == kNull || kindOf(b) == kNull {
		return kindOf(a) == kindOf(b)
	}
	if anyNaN(a) || anyNaN(b) {
		return anyNaN(a) && anyNaN(b)
	}
	return firestore.Compare(a, b) == 0
}

// comparable reports whether two values are of one type for ordering
// comparisons (numbers are one type).
func comparable(a, b *pb.Value) bool {
	ka, kb := kindOf(a), kindOf(b)
	num := func(k kind) bool { return k == kInt || k == kDouble || k == kInt32 || k == kDecimal128 }
	return ka == kb || (num(ka) && num(kb))
}

// anyNaN is a double's or a Decimal128's NaN.
func anyNaN(v *pb.Value) bool {
	if kindOf(v) == kDecimal128 {
		return asDecimal(v).IsNaN()
	}
	return isNaN(v)
}
