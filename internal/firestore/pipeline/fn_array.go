package pipeline

import (
	"slices"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
)

// Array functions.
func init() {
	elems := func(v *pb.Value) []*pb.Value { return v.GetArrayValue().GetValues() }
	register("array", 0, -1, func(c *call, s *scope) val {
		if c.sub != nil {
			rows, err := s.run.subquery(c.sub, s)
			if err != nil {
				return failWith(err)
			}
			out := make([]*pb.Value, len(rows))
			for i, r := range rows {
				out[i] = rowValue(r)
			}
			return of(arrayV(out))
		}
		out := make([]*pb.Value, 0, len(c.args))
		for i := range c.args {
			x := c.arg(s, i)
			if x.isError() {
				return x
			}
			if x.isAbsent() {
				x = of(nullV)
			}
			out = append(out, x.v)
		}
		return of(arrayV(out))
	})
	catalogue["scalar"] = &function{name: "scalar", min: 1, max: 1, eval: func(c *call, s *scope) val {
		rows, err := s.run.subquery(c.sub, s)
		if err != nil {
			return failWith(err)
		}
		switch len(rows) {
		case 0:
			return of(nullV)
		case 1:
			return of(rowValue(rows[0]))
		}
		return failf("Subpipeline returned multiple results (%d) where scalar(...) expects at most one.", len(rows))
	}}
	typedFn("array_concat", 1, -1, specs(arrT), func(_ *call, a []*pb.Value) val {
		var out []*pb.Value
		for _, v := range a {
			out = append(out, elems(v)...)
		}
		return of(arrayV(out))
	})
	typedFn("array_contains", 2, 2, specs(arrT, anyT), func(_ *call, a []*pb.Value) val {
		return of(boolV(contains(elems(a[0]), a[1])))
	})
	typedFn("array_contains_all", 2, 2, specs(arrT), func(_ *call, a []*pb.Value) val {
		for _, want := range elems(a[1]) {
			if !contains(elems(a[0]), want) {
				return of(falseV)
			}
		}
		return of(trueV)
	})
	typedFn("array_contains_any", 2, 2, specs(arrT), func(_ *call, a []*pb.Value) val {
		for _, want := range elems(a[1]) {
			if contains(elems(a[0]), want) {
				return of(trueV)
			}
		}
		return of(falseV)
	})
	typedFn("array_length", 1, 1, specs(arrT), func(_ *call, a []*pb.Value) val { return of(intV(int64(len(elems(a[0]))))) })
	typedFn("array_reverse", 1, 1, specs(arrT), func(_ *call, a []*pb.Value) val {
		vs := slices.Clone(elems(a[0]))
		slices.Reverse(vs)
		return of(arrayV(vs))
	})
	typedFn("array_get", 2, 2, specs(arrT, intT), func(_ *call, a []*pb.Value) val { return at(elems(a[0]), a[1].GetIntegerValue()) })
	register("offset", 2, 2, func(c *call, s *scope) val {
		arr, i := c.arg(s, 0), c.arg(s, 1)
		if arr.isError() {
			return arr
		}
		if arr.v == nil || kindOf(arr.v) != kArray || i.v == nil || kindOf(i.v) != kInt {
			return absent
		}
		return at(elems(arr.v), i.v.GetIntegerValue())
	})
	arrayFn("array_first", 1, 1, specs(arrT), func(_ *call, a []*pb.Value) val { return at(elems(a[0]), 0) })
	arrayFn("array_last", 1, 1, specs(arrT), func(_ *call, a []*pb.Value) val { return at(elems(a[0]), -1) })
	arrayFn("array_first_n", 2, 2, specs(arrT, intT), func(_ *call, a []*pb.Value) val {
		n := a[1].GetIntegerValue()
		if n < 0 {
			return failf("The function array_first_n(...) requires a non-negative n.")
		}
		lo, hi := window(len(elems(a[0])), 0, n)
		return of(arrayV(elems(a[0])[lo:hi]))
	})
	arrayFn("array_last_n", 2, 2, specs(arrT, intT), func(_ *call, a []*pb.Value) val {
		n := a[1].GetIntegerValue()
		if n < 0 {
			return failf("The function array_last_n(...) requires a non-negative n.")
		}
		vs := elems(a[0])
		return of(arrayV(vs[max(0, len(vs)-int(min(n, int64(len(vs))))):]))
	})
	typedFn("array_slice", 2, 3, specs(arrT, intT), func(_ *call, a []*pb.Value) val {
		length := int64(-1)
		if len(a) == 3 {
			if length = a[2].GetIntegerValue(); length < 0 {
				return failf("The function array_slice(...) failed: length must be non-negative.")
			}
		}
		lo, hi := window(len(elems(a[0])), a[1].GetIntegerValue(), length)
		return of(arrayV(elems(a[0])[lo:hi]))
	})
	register("array_transform", 3, 4, func(c *call, s *scope) val {
		return lambda(c, s, func(out []*pb.Value, el, result val) ([]*pb.Value, *val) {
			if result.isError() {
				return nil, &result
			}
			if result.isAbsent() {
				result = of(nullV)
			}
			return append(out, result.v), nil
		})
	})
	register("array_filter", 3, 3, func(c *call, s *scope) val {
		return lambda(c, s, func(out []*pb.Value, el, result val) ([]*pb.Value, *val) {
			if result.isError() {
				return nil, &result
			}
			if result.v != nil && kindOf(result.v) == kBoolean && result.v.GetBooleanValue() {
				return append(out, el.v), nil
			}
			return out, nil
		})
	})
	arraySearchFn("array_index_of", 2, 3, func(_ *call, a []*pb.Value) val {
		vs := elems(a[0])
		if len(a) == 3 && a[2].GetStringValue() == "last" {
			for i := len(vs) - 1; i >= 0; i-- {
				if equal(vs[i], a[1]) {
					return of(intV(int64(i)))
				}
			}
			return of(intV(-1))
		}
		for i, v := range vs {
			if equal(v, a[1]) {
				return of(intV(int64(i)))
			}
		}
		return of(intV(-1))
	})
	arraySearchFn("array_index_of_all", 2, 2, func(_ *call, a []*pb.Value) val {
		out := []*pb.Value{}
		for i, v := range elems(a[0]) {
			if equal(v, a[1]) {
				out = append(out, intV(int64(i)))
			}
		}
		return of(arrayV(out))
	})
	typedFn("sum", 1, 1, specs(arrT), func(_ *call, a []*pb.Value) val {
		acc := newSum()
		for _, v := range elems(a[0]) {
			if isNull(v) {
				continue
			}
			if !summable(v) {
				return typeError("sum", "Number", of(v))
			}
			acc.add(v)
		}
		return of(acc.value())
	})
	extremeN := func(name string, dir int) {
		typedFn(name, 2, 2, specs(arrT, intT), func(_ *call, a []*pb.Value) val {
			n := a[1].GetIntegerValue()
			if n < 0 {
				return failf("The function %s(...) requires a non-negative n.", name)
			}
			var vs []*pb.Value
			for _, v := range elems(a[0]) {
				if !isNull(v) {
					vs = append(vs, v)
				}
			}
			slices.SortStableFunc(vs, func(x, y *pb.Value) int { return firestore.Compare(x, y) * -dir })
			return of(arrayV(vs[:min(int(n), len(vs))]))
		})
	}
	extremeN("maximum_n", 1)
	extremeN("minimum_n", -1)
}

func contains(vs []*pb.Value, want *pb.Value) bool {
	for _, v := range vs {
		if equal(v, want) {
			return true
		}
	}
	return false
}

// at is the element at i (from the end when negative), or absent.
func at(vs []*pb.Value, i int64) val {
	if i < 0 {
		i += int64(len(vs))
	}
	if i < 0 || i >= int64(len(vs)) {
		return absent
	}
	return of(vs[i])
}

// lambda runs an array_transform or array_filter body over the elements of
// its array, binding the element (and for transform's 4-argument form the
// index) to the named variables.
func lambda(c *call, s *scope, step func(out []*pb.Value, el, result val) ([]*pb.Value, *val)) val {
	arr := c.arg(s, 0)
	switch {
	case arr.isError():
		return arr
	case arr.isNull():
		return of(nullV)
	case arr.isAbsent() || kindOf(arr.v) != kArray:
		return typeError(c.fn.name, "Array", arr)
	}
	var names []string
	for i := 1; i < len(c.args)-1; i++ {
		n := c.arg(s, i)
		if n.v == nil || kindOf(n.v) != kString {
			return typeError(c.fn.name, "String", n)
		}
		names = append(names, n.v.GetStringValue())
	}
	body := c.args[len(c.args)-1]
	out := []*pb.Value{}
	for i, el := range arr.v.GetArrayValue().GetValues() {
		inner := s.with(names[0], of(el))
		if len(names) > 1 {
			inner = inner.with(names[1], of(intV(int64(i))))
		}
		var failed *val
		if out, failed = step(out, of(el), body.eval(inner)); failed != nil {
			return *failed
		}
	}
	return of(arrayV(out))
}

// rowValue is a subquery's row as a value: the value of its one field,
// or a map of its fields, as production unwraps the results of array(...)
// and scalar(...).
func rowValue(r *row) *pb.Value {
	if len(r.fields) == 1 {
		for _, v := range r.fields {
			return v
		}
	}
	return mapV(r.fields)
}
