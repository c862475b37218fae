package pipeline

import (
	"math"
	"math/big"
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

// asDecimal is a number as a Decimal128 operand: its value, or nan.
func asDecimal(v *pb.Value) (f *big.Float, nan bool) {
	switch kindOf(v) {
	case kInt, kInt32:
		return new(big.Float).SetPrec(decPrec).SetInt64(asInt(v)), false
	case kDouble:
		d := v.GetDoubleValue()
		if math.IsNaN(d) {
			return nil, true
		}
		return new(big.Float).SetPrec(decPrec).SetFloat64(d), false
	}
	f, nan = firestore.ParseDecimal128(v.GetMapValue().GetFields()["__decimal128__"].GetStringValue())
	if nan || f.IsInf() {
		return f, nan
	}
	return clampDecimal(f), false
}

// Decimal128's range: magnitudes past about 1e6145 are infinite and
// below about 1e-6176 are zero (in binary exponents, with a margin).
const decMaxExp, decMinExp = 20420, -20520

// clampDecimal maps a value beyond Decimal128's range to an infinity or
// zero, which also keeps writing it out cheap.
func clampDecimal(f *big.Float) *big.Float {
	if f.IsInf() || f.Sign() == 0 {
		return f
	}
	switch e := f.MantExp(nil); {
	case e > decMaxExp:
		return new(big.Float).SetInf(f.Sign() < 0)
	case e < decMinExp:
		return new(big.Float).SetPrec(decPrec)
	}
	return f
}

// decPrec is the binary precision decimal arithmetic runs at, that of
// firestore.ParseDecimal128: well past Decimal128's 34 significant
// digits, to which results are rounded.
const decPrec = 256

// decimalText writes a result as a Decimal128 string of at most 34
// significant digits.
func decimalText(f *big.Float) string {
	f = clampDecimal(f)
	switch {
	case f.IsInf() && f.Sign() > 0:
		return "Infinity"
	case f.IsInf():
		return "-Infinity"
	}
	s := f.Text('g', 34)
	if strings.Contains(s, "e") {
		s = strings.Replace(strings.Replace(s, "e+", "E+", 1), "e-", "E-", 1)
	}
	return s
}

// decimalOp applies one arithmetic operation to Decimal128 operands.
// Infinities follow IEEE 754 (an indeterminate form is NaN).
func decimalOp(name string, a, b *pb.Value) val {
	x, nanX := asDecimal(a)
	y, nanY := asDecimal(b)
	if nanX || nanY {
		return of(decimalV("NaN"))
	}
	if x.IsInf() || y.IsInf() {
		if name == "mod" && !x.IsInf() {
			return of(a) // a finite x modulo an infinity is x
		}
		// Beside an infinity only a finite operand's sign counts.
		side := func(f *big.Float) float64 {
			if f.IsInf() {
				return math.Inf(f.Sign())
			}
			return float64(f.Sign())
		}
		r := floatOp(name, side(x), side(y))
		if math.IsNaN(r) {
			return of(decimalV("NaN"))
		}
		return of(decimalV(decimalText(new(big.Float).SetFloat64(r))))
	}
	z := new(big.Float).SetPrec(decPrec)
	switch name {
	case "add":
		z.Add(x, y)
	case "subtract":
		z.Sub(x, y)
	case "multiply":
		z.Mul(x, y)
	case "divide":
		if y.Sign() == 0 {
			if x.Sign() == 0 {
				return of(decimalV("NaN"))
			}
			return of(decimalV(decimalText(new(big.Float).SetInf(x.Sign() < 0))))
		}
		z.Quo(x, y)
	case "mod":
		if y.Sign() == 0 {
			return failf("Division by zero.")
		}
		qf := new(big.Float).SetPrec(decPrec).Quo(x, y)
		if qf.IsInf() {
			return of(decimalV("0")) // beyond any precision: x is a multiple of y
		}
		q, _ := qf.Int(nil)
		z.Sub(x, new(big.Float).SetPrec(decPrec).Mul(y, new(big.Float).SetPrec(decPrec).SetInt(q)))
	}
	return of(decimalV(decimalText(z)))
}

func floatOp(name string, a, b float64) float64 {
	switch name {
	case "add":
		return a + b
	case "subtract":
		return a - b
	case "multiply":
		return a * b
	case "divide":
		return a / b
	}
	return math.Mod(a, b)
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
// "round" (half away from zero), "trunc", "ceil" or "floor". NaN and
// the infinities are their own result.
func decimalRound(v *pb.Value, places int64, mode string) *pb.Value {
	x, nan := asDecimal(v)
	if nan || x.IsInf() {
		return v
	}
	scale := new(big.Float).SetPrec(decPrec).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(min(max(places, -places), 6144)), nil))
	y := new(big.Float).SetPrec(decPrec)
	if places >= 0 {
		y.Mul(x, scale)
	} else {
		y.Quo(x, scale)
	}
	if mode == "round" {
		half := big.NewFloat(0.5)
		if y.Sign() < 0 {
			half.Neg(half)
		}
		y.Add(y, half)
	}
	if y.IsInf() {
		return v // too large to have decimal places
	}
	n, acc := y.Int(nil)
	switch {
	case mode == "floor" && acc == big.Above:
		n.Sub(n, big.NewInt(1))
	case mode == "ceil" && acc == big.Below:
		n.Add(n, big.NewInt(1))
	}
	r := new(big.Float).SetPrec(decPrec).SetInt(n)
	if places >= 0 {
		r.Quo(r, scale)
	} else {
		r.Mul(r, scale)
	}
	return decimalV(decimalText(r))
}
