package pipeline

import (
	"math/rand/v2"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
)

// Comparison, logical, conditional and type functions.
func init() {
	compare := func(name string, holds func(c int) bool) {
		register(name, 2, 2, func(c *call, s *scope) val {
			a, b, short, ok := pair(c, s, always(falseV))
			if !ok {
				return short
			}
			if !comparable(a, b) || isNaN(a) || isNaN(b) {
				return of(falseV)
			}
			return of(boolV(holds(firestore.Compare(a, b))))
		})
	}
	register("equal", 2, 2, func(c *call, s *scope) val {
		a, b, short, ok := pair(c, s, func(both bool) val { return of(boolV(both)) })
		if !ok {
			return short
		}
		return of(boolV(equal(a, b)))
	})
	register("not_equal", 2, 2, func(c *call, s *scope) val {
		a, b, short, ok := pair(c, s, func(both bool) val { return of(boolV(!both)) })
		if !ok {
			return short
		}
		return of(boolV(!equal(a, b)))
	})
	compare("less_than", func(c int) bool { return c < 0 })
	compare("less_than_or_equal", func(c int) bool { return c <= 0 })
	compare("greater_than", func(c int) bool { return c > 0 })
	compare("greater_than_or_equal", func(c int) bool { return c >= 0 })
	register("cmp", 2, 2, func(c *call, s *scope) val {
		a, b, short, ok := pair(c, s, func(both bool) val {
			switch {
			case both:
				return of(intV(0))
			case c.arg(s, 0).isAbsent():
				return of(intV(-1))
			}
			return of(intV(1))
		})
		if !ok {
			return short
		}
		return of(intV(int64(firestore.Compare(a, b))))
	})
	register("equal_any", 2, 2, func(c *call, s *scope) val { return equalAny(c, s, false) })
	register("not_equal_any", 2, 2, func(c *call, s *scope) val { return equalAny(c, s, true) })

	register("and", 1, -1, func(c *call, s *scope) val { return connective(c, s, false) })
	register("or", 1, -1, func(c *call, s *scope) val { return connective(c, s, true) })
	register("nor", 1, -1, func(c *call, s *scope) val { return not(connective(c, s, true)) })
	register("xor", 1, -1, func(c *call, s *scope) val {
		result, sawNull := false, false
		for i := range c.args {
			x := c.arg(s, i)
			switch {
			case x.isError():
				return x
			case x.isNull():
				sawNull = true
			case x.isAbsent() || kindOf(x.v) != kBoolean:
				return typeError("xor", "Boolean", x)
			default:
				result = result != x.v.GetBooleanValue()
			}
		}
		if sawNull {
			return of(nullV)
		}
		return of(boolV(result))
	})
	register("not", 1, 1, func(c *call, s *scope) val { return not(c.arg(s, 0)) })

	register("conditional", 3, 3, func(c *call, s *scope) val {
		cond := c.arg(s, 0)
		switch {
		case cond.isError():
			return cond
		case cond.isAbsent() || (!cond.isNull() && kindOf(cond.v) != kBoolean):
			return typeError("conditional", "Boolean", cond)
		case !cond.isNull() && cond.v.GetBooleanValue():
			return c.arg(s, 1)
		}
		return c.arg(s, 2)
	})
	register("switch_on", 2, -1, func(c *call, s *scope) val {
		n := len(c.args)
		for i := 0; i+1 < n; i += 2 {
			cond := c.arg(s, i)
			if cond.isError() {
				return cond
			}
			if cond.v != nil && kindOf(cond.v) == kBoolean && cond.v.GetBooleanValue() {
				return c.arg(s, i+1)
			}
		}
		if n%2 == 1 {
			return c.arg(s, n-1)
		}
		return failf("The function switch_on(...) failed: all switch cases evaluate to false and there is no default.")
	})
	register("if_error", 2, 2, func(c *call, s *scope) val {
		if x := c.arg(s, 0); !x.isError() {
			return x
		}
		return c.arg(s, 1)
	})
	register("if_absent", 2, 2, func(c *call, s *scope) val {
		if x := c.arg(s, 0); !x.isAbsent() {
			return x
		}
		return c.arg(s, 1)
	})
	register("if_null", 2, 2, func(c *call, s *scope) val {
		if x := c.arg(s, 0); !x.isAbsent() && !x.isNull() {
			return x
		}
		return c.arg(s, 1)
	})
	register("coalesce", 1, -1, func(c *call, s *scope) val {
		for i := range c.args {
			x := c.arg(s, i)
			if x.isError() {
				return x
			}
			if !x.isAbsent() && !x.isNull() {
				return x
			}
		}
		return of(nullV)
	})
	register("exists", 1, 1, func(c *call, s *scope) val {
		x := c.arg(s, 0)
		if x.isError() {
			return x
		}
		return of(boolV(!x.isAbsent()))
	})
	register("is_absent", 1, 1, func(c *call, s *scope) val {
		x := c.arg(s, 0)
		if x.isError() {
			return x
		}
		return of(boolV(x.isAbsent()))
	})
	register("is_error", 1, 1, func(c *call, s *scope) val { return of(boolV(c.arg(s, 0).isError())) })
	register("is_null", 1, 1, func(c *call, s *scope) val { return isNullCheck(c, s, false) })
	register("is_not_null", 1, 1, func(c *call, s *scope) val { return isNullCheck(c, s, true) })
	register("is_nan", 1, 1, func(c *call, s *scope) val { return isNaNCheck(c, s, false) })
	register("is_not_nan", 1, 1, func(c *call, s *scope) val { return isNaNCheck(c, s, true) })
	register("type", 1, 1, func(c *call, s *scope) val {
		x := c.arg(s, 0)
		switch {
		case x.isError():
			return x
		case x.isAbsent():
			return of(stringV("absent"))
		}
		return of(stringV(typeName[kindOf(x.v)]))
	})
	register("is_type", 2, 2, func(c *call, s *scope) val {
		x, t := c.arg(s, 0), c.arg(s, 1)
		if x.isError() {
			return x
		}
		if t.v == nil || kindOf(t.v) != kString {
			return typeError("is_type", "String", t)
		}
		want := t.v.GetStringValue()
		if x.isAbsent() {
			return of(boolV(want == "absent"))
		}
		k := kindOf(x.v)
		switch want {
		case "number":
			return of(boolV(k == kInt || k == kDouble || k == kInt32 || k == kDecimal128))
		case "bytes":
			return of(boolV(k == kBytes || k == kBinary))
		}
		if _, known := typeByName[want]; !known {
			return failf("The function is_type(...) does not know the type %q.", want)
		}
		return of(boolV(typeName[k] == want))
	})
	register("maximum", 1, -1, func(c *call, s *scope) val { return extreme(c, s, 1) })
	register("minimum", 1, -1, func(c *call, s *scope) val { return extreme(c, s, -1) })
	register("storage_size", 1, 1, func(c *call, s *scope) val {
		x := c.arg(s, 0)
		switch {
		case x.isError():
			return x
		case x.isAbsent():
			return of(nullV)
		}
		return of(intV(int64(firestore.ValueSize(x.v))))
	})
	register("rand", 0, 0, func(*call, *scope) val { return of(doubleV(rand.Float64())) })
	register("current_document", 0, 0, func(_ *call, s *scope) val {
		return of(mapV(s.row.fields))
	})
}

// typeByName is every type name is_type accepts.
var typeByName = func() map[string]bool {
	m := map[string]bool{"absent": true, "number": true}
	for _, n := range typeName {
		m[n] = true
	}
	return m
}()

// pair evaluates a comparison's two arguments. An error is an error; an
// absent argument (equal only to absent, ordered before every value) is
// settled here, with short the result and ok false.
func pair(c *call, s *scope, absentResult func(bothAbsent bool) val) (a, b *pb.Value, short val, ok bool) {
	x, y := c.arg(s, 0), c.arg(s, 1)
	if x.isError() {
		return nil, nil, x, false
	}
	if y.isError() {
		return nil, nil, y, false
	}
	if x.isAbsent() || y.isAbsent() {
		return nil, nil, absentResult(x.isAbsent() && y.isAbsent()), false
	}
	return x.v, y.v, val{}, true
}

func always(v *pb.Value) func(bool) val { return func(bool) val { return of(v) } }

// asError is an error value for an argument that is an error or absent.
func asError(fn string, x val) val {
	if x.isError() {
		return x
	}
	return failf("The function %s(...) requires a value but got `ABSENT`.", fn)
}

func not(x val) val {
	switch {
	case x.isError():
		return x
	case x.isNull():
		return x
	case x.isAbsent() || kindOf(x.v) != kBoolean:
		return typeError("not", "Boolean", x)
	}
	return of(boolV(!x.v.GetBooleanValue()))
}

// connective is and (stop on false) or or (stop on true): an error or a
// non-boolean wins over null, which wins over the other outcome.
func connective(c *call, s *scope, stopOn bool) val {
	var failed val
	sawNull := false
	for i := range c.args {
		x := c.arg(s, i)
		switch {
		case x.isError():
			if failed.err == nil {
				failed = x
			}
		case x.isNull():
			sawNull = true
		case x.isAbsent() || kindOf(x.v) != kBoolean:
			if failed.err == nil {
				failed = typeError(c.fn.name, "Boolean", x)
			}
		case x.v.GetBooleanValue() == stopOn:
			return of(boolV(stopOn))
		}
	}
	if failed.err != nil {
		return failed
	}
	if sawNull {
		return of(nullV)
	}
	return of(boolV(!stopOn))
}

func equalAny(c *call, s *scope, negate bool) val {
	x := c.arg(s, 0)
	if x.isError() {
		return asError(c.fn.name, x)
	}
	list := c.arg(s, 1)
	switch {
	case list.isError():
		return list
	case list.isNull():
		return of(nullV)
	case list.isAbsent() || kindOf(list.v) != kArray:
		return typeError(c.fn.name, "Array", list)
	}
	if x.isAbsent() { // a missing field equals nothing, as equal(...) has it: not_equal_any matches it
		return of(boolV(negate))
	}
	found := false
	for _, el := range list.v.GetArrayValue().GetValues() {
		if equal(x.v, el) {
			found = true
			break
		}
	}
	return of(boolV(found != negate))
}

func isNullCheck(c *call, s *scope, negate bool) val {
	x := c.arg(s, 0)
	if x.isError() || x.isAbsent() {
		return asError(c.fn.name, x)
	}
	return of(boolV(x.isNull() != negate))
}

func isNaNCheck(c *call, s *scope, negate bool) val {
	x := c.arg(s, 0)
	switch {
	case x.isError():
		return x
	case x.isNull():
		return of(nullV)
	case x.isAbsent() || !anyNumT.ok(x.v):
		return typeError(c.fn.name, "Number", x)
	}
	return of(boolV(anyNaN(x.v) != negate))
}

// extreme is maximum (dir 1) or minimum (-1): of its arguments, or of the
// elements of its one array argument; null and absent values are skipped.
func extreme(c *call, s *scope, dir int) val {
	var candidates []*pb.Value
	if len(c.args) == 1 {
		x := c.arg(s, 0)
		switch {
		case x.isError():
			return x
		case x.isAbsent() || x.isNull():
			return of(nullV)
		case kindOf(x.v) == kArray:
			candidates = x.v.GetArrayValue().GetValues()
		default:
			return x
		}
	} else {
		for i := range c.args {
			x := c.arg(s, i)
			if x.isError() {
				return x
			}
			if x.v != nil {
				candidates = append(candidates, x.v)
			}
		}
	}
	var best *pb.Value
	for _, v := range candidates {
		if isNull(v) {
			continue
		}
		if best == nil || firestore.Compare(v, best)*dir > 0 {
			best = v
		}
	}
	if best == nil {
		return of(nullV)
	}
	return of(best)
}
