package pipeline

import (
	"math"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
)

// accumulator folds one group's rows into a value.
type accumulator interface {
	add(s *scope) *evalError
	result() *pb.Value
}

// aggregates are the aggregation functions, by name: each makes a fresh
// accumulator per group from its compiled arguments.
var aggregates = map[string]struct {
	min, max int
	make     func(args []expr) accumulator
}{
	"count":              {0, 1, func(a []expr) accumulator { return &counter{arg: first(a)} }},
	"count_if":           {1, 1, func(a []expr) accumulator { return &counter{arg: a[0], onlyTrue: true} }},
	"count_distinct":     {1, 1, func(a []expr) accumulator { return &distinct{arg: a[0], count: true} }},
	"sum":                {1, 1, func(a []expr) accumulator { return &summer{arg: a[0], sum: newSum()} }},
	"average":            {1, 1, func(a []expr) accumulator { return &summer{arg: a[0], sum: newSum(), avg: true} }},
	"minimum":            {1, 1, func(a []expr) accumulator { return &extremum{arg: a[0], dir: -1} }},
	"maximum":            {1, 1, func(a []expr) accumulator { return &extremum{arg: a[0], dir: 1} }},
	"first":              {1, 1, func(a []expr) accumulator { return &pick{arg: a[0], first: true} }},
	"last":               {1, 1, func(a []expr) accumulator { return &pick{arg: a[0]} }},
	"array_agg":          {1, 1, func(a []expr) accumulator { return &collector{arg: a[0]} }},
	"array_agg_distinct": {1, 1, func(a []expr) accumulator { return &distinct{arg: a[0]} }},
}

func first(a []expr) expr {
	if len(a) == 0 {
		return nil
	}
	return a[0]
}

// counter counts rows: all of them, those whose argument is a value other
// than null, or (count_if) those whose condition is true.
type counter struct {
	arg      expr
	onlyTrue bool
	n        int64
}

func (c *counter) add(s *scope) *evalError {
	if c.arg == nil {
		c.n++
		return nil
	}
	x := c.arg.eval(s)
	switch {
	case x.isError():
		return x.err
	case x.v == nil || isNull(x.v):
	case !c.onlyTrue || (kindOf(x.v) == kBoolean && x.v.GetBooleanValue()):
		c.n++
	}
	return nil
}

func (c *counter) result() *pb.Value { return intV(c.n) }

// numSum adds numbers as Firestore's sum does: integers stay an integer
// until one overflows, a double makes the sum a double, and (production's
// widening, INT32 < INT64 < FLOAT64 < DECIMAL128) a Decimal128 makes it a
// Decimal128, added exactly from then on.
type numSum struct {
	i       int64
	f       float64
	isFloat bool
	n       int64
	// dec is the sum once a Decimal128 was added (NaN and the
	// infinities included), as decimal arithmetic adds.
	dec *firestore.Decimal
}

func newSum() *numSum { return &numSum{} }

func (t *numSum) add(v *pb.Value) {
	t.n++
	k := kindOf(v)
	if k == kDecimal128 && t.dec == nil {
		var d firestore.Decimal
		if t.isFloat {
			d = firestore.DecimalFromFloat(t.f)
		} else {
			d = firestore.DecimalFromInt(t.i)
		}
		t.dec = &d
	}
	if t.dec != nil {
		*t.dec = t.dec.Add(asDecimal(v))
		return
	}
	if k == kInt32 {
		v = intV(asInt(v)) // an Int32 widens to an integer
	}
	if i, ok := v.GetValueType().(*pb.Value_IntegerValue); ok && !t.isFloat {
		r := t.i + i.IntegerValue
		if (t.i > 0 && i.IntegerValue > 0 && r < 0) || (t.i < 0 && i.IntegerValue < 0 && r >= 0) {
			t.isFloat, t.f = true, float64(t.i)+float64(i.IntegerValue)
			return
		}
		t.i = r
		return
	}
	if !t.isFloat {
		t.isFloat, t.f = true, float64(t.i)
	}
	t.f += toFloat(v)
}

func (t *numSum) value() *pb.Value {
	if t.dec != nil {
		return firestore.DecimalValue(*t.dec)
	}
	if t.isFloat {
		return doubleV(t.f)
	}
	return intV(t.i)
}

// summable is whether sum and average add v.
func summable(v *pb.Value) bool {
	if isNumber(v) {
		return true
	}
	k := kindOf(v)
	return k == kInt32 || k == kDecimal128
}

// summer is sum or average over the numeric values (others are skipped).
type summer struct {
	arg expr
	sum *numSum
	avg bool
}

func (a *summer) add(s *scope) *evalError {
	x := a.arg.eval(s)
	if x.isError() {
		return x.err
	}
	if x.v != nil && summable(x.v) {
		a.sum.add(x.v)
	}
	return nil
}

func (a *summer) result() *pb.Value {
	if !a.avg {
		return a.sum.value()
	}
	if a.sum.n == 0 {
		return nullV
	}
	if a.sum.dec != nil {
		return firestore.DecimalValue(a.sum.dec.Quo(firestore.DecimalFromInt(a.sum.n)))
	}
	if !a.sum.isFloat {
		return doubleV(float64(a.sum.i) / float64(a.sum.n))
	}
	if math.IsInf(a.sum.f, 0) || math.IsNaN(a.sum.f) {
		return doubleV(a.sum.f)
	}
	return doubleV(a.sum.f / float64(a.sum.n))
}

// extremum is minimum or maximum over non-null values.
type extremum struct {
	arg  expr
	dir  int
	best *pb.Value
}

func (a *extremum) add(s *scope) *evalError {
	x := a.arg.eval(s)
	if x.isError() {
		return x.err
	}
	if x.v != nil && !isNull(x.v) && (a.best == nil || firestore.Compare(x.v, a.best)*a.dir > 0) {
		a.best = x.v
	}
	return nil
}

func (a *extremum) result() *pb.Value {
	if a.best == nil {
		return nullV
	}
	return a.best
}

// pick is the value of the first or the last row.
type pick struct {
	arg   expr
	first bool
	seen  bool
	v     *pb.Value
}

func (a *pick) add(s *scope) *evalError {
	if a.first && a.seen {
		return nil
	}
	x := a.arg.eval(s)
	if x.isError() {
		return x.err
	}
	a.seen, a.v = true, x.v
	if a.v == nil {
		a.v = nullV
	}
	return nil
}

func (a *pick) result() *pb.Value {
	if a.v == nil {
		return nullV
	}
	return a.v
}

// collector is array_agg: every value, absent ones as null.
type collector struct {
	arg  expr
	vals []*pb.Value
}

func (a *collector) add(s *scope) *evalError {
	x := a.arg.eval(s)
	if x.isError() {
		return x.err
	}
	v := x.v
	if v == nil {
		v = nullV
	}
	a.vals = append(a.vals, v)
	return nil
}

func (a *collector) result() *pb.Value { return arrayV(append([]*pb.Value{}, a.vals...)) }

// distinct is array_agg_distinct, or with count count_distinct (which
// skips null).
type distinct struct {
	arg   expr
	count bool
	vals  []*pb.Value
}

func (a *distinct) add(s *scope) *evalError {
	x := a.arg.eval(s)
	if x.isError() {
		return x.err
	}
	v := x.v
	if v == nil {
		v = nullV
	}
	if a.count && isNull(v) {
		return nil
	}
	if !contains(a.vals, v) {
		a.vals = append(a.vals, v)
	}
	return nil
}

func (a *distinct) result() *pb.Value {
	if a.count {
		return intV(int64(len(a.vals)))
	}
	return arrayV(append([]*pb.Value{}, a.vals...))
}
