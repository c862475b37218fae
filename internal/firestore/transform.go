package firestore

import (
	"math"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// applyTransform applies one field transform to fields and returns the
// transform result the write response carries.
func applyTransform(fields map[string]*pb.Value, t *pb.DocumentTransform_FieldTransform, commitTime *timestamppb.Timestamp) (*pb.Value, error) {
	path, err := ParseFieldPath(t.GetFieldPath())
	if err != nil {
		return nil, err
	}
	current, _ := GetField(fields, path)
	var result *pb.Value
	switch x := t.GetTransformType().(type) {
	case *pb.DocumentTransform_FieldTransform_SetToServerValue:
		if x.SetToServerValue != pb.DocumentTransform_FieldTransform_REQUEST_TIME {
			return nil, errorf(errs.InvalidArgument, "Unknown server value %v.", x.SetToServerValue)
		}
		result = &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: commitTime}}
		setField(fields, path, result)
		return result, nil
	case *pb.DocumentTransform_FieldTransform_Increment:
		if err := requireNumber(x.Increment, "increment"); err != nil {
			return nil, err
		}
		result = increment(current, x.Increment)
	case *pb.DocumentTransform_FieldTransform_Maximum:
		if err := requireNumber(x.Maximum, "maximum"); err != nil {
			return nil, err
		}
		result = extreme(current, x.Maximum, 1)
	case *pb.DocumentTransform_FieldTransform_Minimum:
		if err := requireNumber(x.Minimum, "minimum"); err != nil {
			return nil, err
		}
		result = extreme(current, x.Minimum, -1)
	case *pb.DocumentTransform_FieldTransform_AppendMissingElements:
		elems := append([]*pb.Value(nil), current.GetArrayValue().GetValues()...)
		for _, v := range x.AppendMissingElements.GetValues() {
			if v = truncated(v); !containsValue(elems, v) {
				elems = append(elems, v)
			}
		}
		setField(fields, path, arrayValue(elems))
		return nullValue(), nil
	case *pb.DocumentTransform_FieldTransform_RemoveAllFromArray:
		var elems []*pb.Value
		remove := truncated(arrayValue(x.RemoveAllFromArray.GetValues())).GetArrayValue().GetValues()
		for _, v := range current.GetArrayValue().GetValues() {
			if !containsValue(remove, v) {
				elems = append(elems, v)
			}
		}
		setField(fields, path, arrayValue(elems))
		return nullValue(), nil
	default:
		return nil, errorf(errs.InvalidArgument, "A field transform must set a transform type.")
	}
	setField(fields, path, result)
	return result, nil
}

func requireNumber(v *pb.Value, op string) error {
	if !isIntOrDouble(v) {
		return errorf(errs.InvalidArgument, "The %s operand must be a number.", op)
	}
	return nil
}

// increment adds n to current: integers stay integers (saturating), any
// double makes a double, and a non-number current value is replaced by n.
// A stored Int32 counts as an integer; a stored Decimal128 makes a
// Decimal128 sum, exact to its 34 digits and keeping its trailing zeros
// (1.50 + 1 is 2.50), as production's SDKs model it.
func increment(current, n *pb.Value) *pb.Value {
	switch bsonNumber(current) {
	case "":
		if !isIntOrDouble(current) {
			return n
		}
	case "__decimal128__":
		a, _ := DecimalOf(current)
		b, _ := DecimalOf(n)
		return DecimalValue(a.Add(b))
	case "__int__":
		current = intValue(bsonField(current).GetIntegerValue())
	}
	ci, cInt := current.GetValueType().(*pb.Value_IntegerValue)
	ni, nInt := n.GetValueType().(*pb.Value_IntegerValue)
	if cInt && nInt {
		a, b := ci.IntegerValue, ni.IntegerValue
		sum := a + b
		switch {
		case a > 0 && b > 0 && sum < 0:
			sum = math.MaxInt64
		case a < 0 && b < 0 && sum >= 0:
			sum = math.MinInt64
		}
		return intValue(sum)
	}
	return doubleValue(asFloat(current) + asFloat(n))
}

// extreme keeps the larger (sign 1) or smaller (sign -1) of current and n;
// equal values keep the stored one, and NaN wins.
func extreme(current, n *pb.Value, sign int) *pb.Value {
	if !isIntOrDouble(current) && bsonNumber(current) == "" {
		return n
	}
	if d, ok := DecimalOf(current); ok && d.IsNaN() {
		return current
	}
	if isNaN(n) {
		return n
	}
	if Compare(n, current)*sign > 0 {
		return n
	}
	return current
}

// bsonNumber is "__int__" for an Int32, "__decimal128__" for a
// Decimal128, else "".
func bsonNumber(v *pb.Value) string {
	if r, ok := bsonRank(v); ok && r == rankNumber {
		for k := range v.GetMapValue().GetFields() {
			return k
		}
	}
	return ""
}

func asFloat(v *pb.Value) float64 {
	if i, ok := v.GetValueType().(*pb.Value_IntegerValue); ok {
		return float64(i.IntegerValue)
	}
	return v.GetDoubleValue()
}

func containsValue(list []*pb.Value, v *pb.Value) bool {
	for _, e := range list {
		if typeOrder(e) == typeOrder(v) && Compare(e, v) == 0 {
			return true
		}
	}
	return false
}

func intValue(i int64) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: i}}
}
func doubleValue(f float64) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: f}}
}
func nullValue() *pb.Value { return &pb.Value{ValueType: &pb.Value_NullValue{}} }
func arrayValue(v []*pb.Value) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: v}}}
}
