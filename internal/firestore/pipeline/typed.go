package pipeline

import (
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// spec is the type an argument must have: its name in error messages and
// its test.
type spec struct {
	name string
	ok   func(*pb.Value) bool
}

func isKind(ks ...kind) func(*pb.Value) bool {
	return func(v *pb.Value) bool {
		k := kindOf(v)
		for _, want := range ks {
			if k == want {
				return true
			}
		}
		return false
	}
}

var (
	anyT   = spec{"Any", func(*pb.Value) bool { return true }}
	strT   = spec{"String", isKind(kString)}
	intT   = spec{"Int64", isKind(kInt)}
	arrT   = spec{"Array", isKind(kArray)}
	mapT   = spec{"Map", isKind(kMap)}
	tsT    = spec{"Timestamp", isKind(kTimestamp)}
	geoT   = spec{"GeoPoint", isKind(kGeoPoint)}
	strOrB = spec{"String or Bytes", isKind(kString, kBytes)}
)

// typed evaluates a call's arguments against specs (the last spec
// repeats for further arguments). It returns the values, or the result
// the function gives instead: the first error value, a type error for an
// absent or mistyped argument, or null when an argument is null.
func typed(c *call, s *scope, specs ...spec) ([]*pb.Value, val, bool) {
	vals := make([]*pb.Value, len(c.args))
	sawNull := false
	for i := range c.args {
		sp := specs[min(i, len(specs)-1)]
		x := c.arg(s, i)
		switch {
		case x.isError():
			return nil, x, false
		case x.isAbsent():
			return nil, typeError(c.fn.name, sp.name, x), false
		case x.isNull():
			sawNull = true
			continue
		case !sp.ok(x.v):
			return nil, typeError(c.fn.name, sp.name, x), false
		}
		vals[i] = x.v
	}
	if sawNull {
		return nil, of(nullV), false
	}
	return vals, val{}, true
}

// typedFn registers a function whose arguments are checked by typed.
func typedFn(name string, min, max int, specs []spec, f func(c *call, args []*pb.Value) val) {
	register(name, min, max, func(c *call, s *scope) val {
		args, short, ok := typed(c, s, specs...)
		if !ok {
			return short
		}
		return f(c, args)
	})
}

func specs(s ...spec) []spec { return s }

// arrayFn is typedFn for the array functions production answers with null
// when their array is a missing field (array_first(field('nope')) is null).
func arrayFn(name string, min, max int, specs []spec, f func(c *call, args []*pb.Value) val) {
	register(name, min, max, func(c *call, s *scope) val {
		if c.arg(s, 0).isAbsent() {
			return of(nullV)
		}
		args, short, ok := typed(c, s, specs...)
		if !ok {
			return short
		}
		return f(c, args)
	})
}

// arraySearchFn is for array_index_of(_all): a null or missing array gives
// null, but null is a value to search for (array_index_of([1, null], null) is 1).
func arraySearchFn(name string, min, max int, f func(c *call, args []*pb.Value) val) {
	register(name, min, max, func(c *call, s *scope) val {
		arr := c.arg(s, 0)
		switch {
		case arr.isError():
			return arr
		case arr.isAbsent() || arr.isNull():
			return of(nullV)
		case kindOf(arr.v) != kArray:
			return typeError(name, "Array", arr)
		}
		args := []*pb.Value{arr.v}
		for i := 1; i < len(c.args); i++ {
			x := c.arg(s, i)
			switch {
			case x.isError():
				return x
			case i == 1 && x.isAbsent():
				return typeError(name, "Any", x)
			case i == 2 && x.isNull():
				return of(nullV)
			case i == 2 && (x.isAbsent() || kindOf(x.v) != kString):
				return typeError(name, "String", x)
			}
			args = append(args, x.v)
		}
		return f(c, args)
	})
}
