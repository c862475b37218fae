package pipeline

import (
	"math"
	"math/big"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// Arithmetic functions: integers stay integers (an overflow is an error),
// a double makes the result a double.
func init() {
	arith := func(name string, ints func(a, b int64) (int64, bool, string), doubles func(a, b float64) (float64, string)) {
		typedFn(name, 2, -1, specs(anyNumT), func(c *call, args []*pb.Value) val {
			acc := args[0]
			for _, next := range args[1:] {
				switch w := max(width(kindOf(acc)), width(kindOf(next))); w {
				case 3:
					r := decimalOp(name, acc, next)
					if r.isError() {
						return r
					}
					acc = r.v
				case 2:
					r, msg := doubles(numberFloat(acc), numberFloat(next))
					if msg != "" {
						return failf("%s", msg)
					}
					acc = doubleV(r)
				default:
					r, ok, msg := ints(asInt(acc), asInt(next))
					if msg != "" {
						return failf("%s", msg)
					}
					if w == 0 && (r < math.MinInt32 || r > math.MaxInt32) {
						ok = false
					}
					if !ok {
						return failf("The function %s(...) overflowed the range of a %d-bit integer.", name, 32+32*w)
					}
					acc = intV(r)
					if w == 0 {
						acc = int32V(r)
					}
				}
			}
			return of(acc)
		})
	}
	arith("add", func(a, b int64) (int64, bool, string) {
		r := a + b
		return r, !(a > 0 && b > 0 && r < 0) && !(a < 0 && b < 0 && r >= 0), ""
	}, func(a, b float64) (float64, string) { return a + b, "" })
	arith("subtract", func(a, b int64) (int64, bool, string) {
		r := a - b
		return r, !(a >= 0 && b < 0 && r < 0) && !(a < 0 && b > 0 && r >= 0), ""
	}, func(a, b float64) (float64, string) { return a - b, "" })
	arith("multiply", func(a, b int64) (int64, bool, string) {
		p := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
		return p.Int64(), p.IsInt64(), ""
	}, func(a, b float64) (float64, string) { return a * b, "" })
	arith("divide", func(a, b int64) (int64, bool, string) {
		if b == 0 {
			return 0, true, "Division by zero."
		}
		if a == math.MinInt64 && b == -1 {
			return 0, false, ""
		}
		return a / b, true, ""
	}, func(a, b float64) (float64, string) { return a / b, "" })
	arith("mod", func(a, b int64) (int64, bool, string) {
		if b == 0 {
			return 0, true, "Division by zero."
		}
		if b == -1 {
			return 0, true, ""
		}
		return a % b, true, ""
	}, func(a, b float64) (float64, string) {
		if b == 0 {
			return 0, "Division by zero."
		}
		return math.Mod(a, b), ""
	})
	catalogue["subtract"].max, catalogue["divide"].max, catalogue["mod"].max = 2, 2, 2

	typedFn("abs", 1, 1, specs(anyNumT), func(_ *call, a []*pb.Value) val {
		switch kindOf(a[0]) {
		case kInt32:
			i := asInt(a[0])
			if i == math.MinInt32 {
				return failf("The function abs(...) overflowed the range of a 32-bit integer.")
			}
			return of(int32V(max(i, -i)))
		case kDecimal128:
			s := a[0].GetMapValue().GetFields()["__decimal128__"].GetStringValue()
			return of(decimalV(strings.TrimPrefix(s, "-")))
		}
		if i, ok := a[0].GetValueType().(*pb.Value_IntegerValue); ok {
			if i.IntegerValue == math.MinInt64 {
				return failf("The function abs(...) overflowed the range of a 64-bit integer.")
			}
			if i.IntegerValue < 0 {
				return of(intV(-i.IntegerValue))
			}
			return of(a[0])
		}
		return of(doubleV(math.Abs(a[0].GetDoubleValue())))
	})
	rounding := func(name string, f func(float64) float64) {
		typedFn(name, 1, 2, specs(anyNumT, intT), func(_ *call, a []*pb.Value) val {
			places := int64(0)
			if len(a) == 2 {
				places = a[1].GetIntegerValue()
			}
			switch kindOf(a[0]) {
			case kDecimal128:
				return of(decimalRound(a[0], places, name))
			case kInt32:
				if places >= 0 {
					return of(a[0])
				}
				scale := math.Pow(10, float64(-places))
				r := int64(f(float64(asInt(a[0]))/scale) * scale)
				if r < math.MinInt32 || r > math.MaxInt32 {
					return failf("The function %s(...) overflowed the range of a 32-bit integer.", name)
				}
				return of(int32V(r))
			}
			if i, ok := a[0].GetValueType().(*pb.Value_IntegerValue); ok {
				if places >= 0 {
					return of(a[0])
				}
				scale := math.Pow(10, float64(-places))
				return of(intV(int64(f(float64(i.IntegerValue)/scale) * scale)))
			}
			x := a[0].GetDoubleValue()
			if places == 0 {
				return of(doubleV(f(x)))
			}
			scale := math.Pow(10, float64(places))
			return of(doubleV(f(x*scale) / scale))
		})
	}
	rounding("round", math.Round)
	rounding("trunc", math.Trunc)
	unary := func(name string, f func(float64) (float64, string)) {
		typedFn(name, 1, 1, specs(anyNumT), func(_ *call, a []*pb.Value) val {
			if name == "ceil" || name == "floor" {
				switch kindOf(a[0]) {
				case kInt, kInt32:
					return of(a[0])
				case kDecimal128:
					return of(decimalRound(a[0], 0, name))
				}
			}
			r, msg := f(numberFloat(a[0]))
			if msg != "" {
				return failf("%s", msg)
			}
			return of(doubleV(r))
		})
	}
	unary("ceil", func(x float64) (float64, string) { return math.Ceil(x), "" })
	unary("floor", func(x float64) (float64, string) { return math.Floor(x), "" })
	unary("exp", func(x float64) (float64, string) { return math.Exp(x), "" })
	unary("sqrt", func(x float64) (float64, string) {
		if x < 0 {
			return 0, "The function sqrt(...) requires a non-negative argument."
		}
		return math.Sqrt(x), ""
	})
	unary("ln", func(x float64) (float64, string) { return logOf(x, math.Log, "ln") })
	unary("log10", func(x float64) (float64, string) { return logOf(x, math.Log10, "log10") })
	typedFn("log", 2, 2, specs(anyNumT), func(_ *call, a []*pb.Value) val {
		x, base := numberFloat(a[0]), numberFloat(a[1])
		if base <= 0 || base == 1 {
			return failf("The function log(...) requires a positive base other than 1.")
		}
		r, msg := logOf(x, math.Log, "log")
		if msg != "" {
			return failf("%s", msg)
		}
		return of(doubleV(r / math.Log(base)))
	})
	typedFn("pow", 2, 2, specs(anyNumT), func(_ *call, a []*pb.Value) val {
		return of(doubleV(math.Pow(numberFloat(a[0]), numberFloat(a[1]))))
	})
}

func logOf(x float64, f func(float64) float64, name string) (float64, string) {
	if x <= 0 {
		return 0, "The function " + name + "(...) requires a positive argument."
	}
	return f(x), ""
}
