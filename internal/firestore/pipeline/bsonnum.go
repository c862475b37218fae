package pipeline

import (
	"math"
	"strconv"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
)

// Numbers of the MongoDB-compatible API in arithmetic: production widens
// INT32 < INT64 < FLOAT64 < DECIMAL128 and answers in the widest type
// present, so two Int32s give an Int32 (an overflow of 32 bits is an
// error) and a Decimal128 makes the result a Decimal128.

// anyNumT is a number of any of the four numeric types.
var anyNumT = spec{"Number", isKind(kInt, kDouble, kInt32, kDecimal128)}

// width ranks a numeric kind in the widening order.
func width(k kind) int {
	switch k {
	case kInt32:
		return 0
	case kInt:
		return 1
	case kDouble:
		return 2
	}
	return 3
}

func int32V(i int64) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{"__int__": intV(i)}}}}
}

func decimalV(s string) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{
		"__decimal128__": {ValueType: &pb.Value_StringValue{StringValue: s}}}}}}
}

// asInt is an Int32's or an integer's value.
func asInt(v *pb.Value) int64 {
	if kindOf(v) == kInt32 {
		return v.GetMapValue().GetFields()["__int__"].GetIntegerValue()
	}
	return v.GetIntegerValue()
}

// asDecimal is a number as a Decimal128 operand.
func asDecimal(v *pb.Value) firestore.Decimal {
	d, _ := firestore.DecimalOf(v)
	return d
}

// decimalOp applies one arithmetic operation to Decimal128 operands, as
// IEEE 754-2008 decimal arithmetic does (MongoDB's Decimal128): exact to
// 34 digits, keeping the operands' trailing zeros (1.50 + 1 is 2.50), a
// double read by its shortest form, infinities as IEEE 754 has them.
func decimalOp(name string, a, b *pb.Value) val {
	x, y := asDecimal(a), asDecimal(b)
	var r firestore.Decimal
	switch name {
	case "add":
		r = x.Add(y)
	case "subtract":
		r = x.Sub(y)
	case "multiply":
		r = x.Mul(y)
	case "divide":
		r = x.Quo(y)
	case "mod":
		var ok bool
		if r, ok = x.Rem(y); !ok {
			return failf("Division by zero.")
		}
		if y.IsInf() && !x.IsNaN() && !x.IsInf() {
			return of(a) // a finite x modulo an infinity is x
		}
	}
	return of(firestore.DecimalValue(r))
}

// numberFloat is any numeric value as a double.
func numberFloat(v *pb.Value) float64 {
	switch kindOf(v) {
	case kInt, kInt32:
		return float64(asInt(v))
	case kDecimal128:
		s := v.GetMapValue().GetFields()["__decimal128__"].GetStringValue()
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			return math.NaN()
		}
		return f
	}
	return v.GetDoubleValue()
}

// decimalRound rounds a Decimal128 to places decimal places: mode is
// "round" (half away from zero), "trunc", "ceil" or "floor". A value with
// no more places is itself (1.50 rounded to 3 places stays 1.50); a
// result with places < 0 is written without an exponent when the value
// had none (round(1234, -1) is 1230). NaN and the infinities are their
// own result.
func decimalRound(v *pb.Value, places int64, mode string) *pb.Value {
	d := asDecimal(v)
	places = min(max(places, -7000), 7000) // past Decimal128's exponents either way
	r := d.Quantize(int(-places), mode)
	if places < 0 && d.Exp() <= 0 {
		r = r.Rescale(0)
	}
	return firestore.DecimalValue(r)
}
