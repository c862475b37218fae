package pipeline

import (
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// push takes over the leading stages a classic structured query answers
// exactly, so the engine's planner serves them from its indexes: the
// conjuncts of the leading where stages that translate to field filters
// (a residual where keeps the others), then a sort on fields every
// result is known to have, then offset and limit when no residual is
// left. It returns the query (without From) and the stages left to run.
//
// A descending sort on one field that a result may lack, followed by a
// limit, is pushed down too, with absentLast naming the field: rows
// without it sort last, so when the query returns fewer rows than its
// limit the caller appends those rows (in name order) up to the limit.
func push(stages []stage) (q *pb.StructuredQuery, rest []stage, absentLast string) {
	q = &pb.StructuredQuery{}
	var filters []*pb.StructuredQuery_Filter
	var residual []*pb.Value
	equality := ""               // a field an equality filter pins
	present := map[string]bool{} // fields the pushed filters require
	wantExists := map[string]bool{}
	i := 0
	for ; i < len(stages); i++ {
		w, ok := stages[i].(*whereStage)
		if !ok {
			break
		}
		for _, c := range conjuncts(w.raw) {
			if f, field, ok := toFilter(c); ok {
				filters = append(filters, f)
				present[field] = true
				if f.GetFieldFilter().GetOp() == pb.StructuredQuery_FieldFilter_EQUAL && field != "__name__" && equality == "" {
					equality = field
				}
			} else if field, ok := existsField(c); ok {
				wantExists[field] = true
			} else {
				residual = append(residual, c)
			}
		}
	}
	if i < len(stages) {
		if s, ok := stages[i].(*sortStage); ok {
			if orders, ok := toOrders(s, present, wantExists); ok {
				q.OrderBy = orders
				for _, o := range orders {
					present[o.GetField().GetFieldPath()] = true
				}
				i++
			} else if field, ok := descThenLimit(s, stages[i+1:]); ok && len(residual) == 0 && len(wantExists) == 0 {
				q.OrderBy, absentLast = []*pb.StructuredQuery_Order{{Field: &pb.StructuredQuery_FieldReference{FieldPath: field}, Direction: pb.StructuredQuery_DESCENDING}}, field
				i++
			}
		}
	}
	if q.OrderBy == nil && equality != "" {
		// Ordering by a field an equality pins changes no result and no
		// order (__name__ still breaks the ties), and makes the planner
		// seek that field's index instead of reading every document.
		q.OrderBy = []*pb.StructuredQuery_Order{{Field: &pb.StructuredQuery_FieldReference{FieldPath: equality}, Direction: pb.StructuredQuery_ASCENDING}}
	}
	for f := range wantExists {
		if !present[f] {
			residual = append(residual, existsCall(f))
		}
	}
	if len(residual) == 0 {
		for ; i < len(stages) && (absentLast == "" || q.Limit == nil); i++ {
			s, ok := stages[i].(*sliceStage)
			if !ok {
				break
			}
			if s.offset >= 0 {
				if q.Limit != nil || absentLast != "" {
					break // an offset after a limit is not a classic query's
				}
				q.Offset += int32(min(s.offset, 1<<31-1))
				continue
			}
			if q.Limit == nil || int64(q.Limit.GetValue()) > s.limit {
				q.Limit = wrapperspb.Int32(int32(min(s.limit, 1<<31-1)))
			}
		}
	}
	switch len(filters) {
	case 0:
	case 1:
		q.Where = filters[0]
	default:
		q.Where = &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_CompositeFilter{
			CompositeFilter: &pb.StructuredQuery_CompositeFilter{Op: pb.StructuredQuery_CompositeFilter_AND, Filters: filters},
		}}
	}
	rest = stages[i:]
	if len(residual) > 0 {
		cond := residual[0]
		if len(residual) > 1 {
			cond = &pb.Value{ValueType: &pb.Value_FunctionValue{FunctionValue: &pb.Function{Name: "and", Args: residual}}}
		}
		x, err := compileExpr(cond, 0)
		if err != nil { // compiled once already, as part of its stage
			return &pb.StructuredQuery{}, stages, ""
		}
		rest = append([]stage{&whereStage{cond: x, raw: cond}}, rest...)
	}
	return q, rest, absentLast
}

// descThenLimit recognises a descending sort on one field (then perhaps
// __name__ descending) directly followed by a limit.
func descThenLimit(s *sortStage, next []stage) (string, bool) {
	if len(next) == 0 {
		return "", false
	}
	if l, ok := next[0].(*sliceStage); !ok || l.limit < 0 {
		return "", false
	}
	if len(s.keys) != 1 || !s.keys[0].desc {
		return "", false
	}
	ref := s.keys[0].raw.GetFieldReferenceValue()
	path, err := firestore.ParseFieldPath(ref)
	if ref == "" || err != nil || path.String() == "__name__" {
		return "", false
	}
	return path.String(), true
}

// conjuncts flattens nested and(...) calls.
func conjuncts(v *pb.Value) []*pb.Value {
	f := v.GetFunctionValue()
	if f == nil || f.GetName() != "and" {
		return []*pb.Value{v}
	}
	var out []*pb.Value
	for _, a := range f.GetArgs() {
		out = append(out, conjuncts(a)...)
	}
	return out
}

var fieldOps = map[string]pb.StructuredQuery_FieldFilter_Operator{
	"equal":                 pb.StructuredQuery_FieldFilter_EQUAL,
	"less_than":             pb.StructuredQuery_FieldFilter_LESS_THAN,
	"less_than_or_equal":    pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL,
	"greater_than":          pb.StructuredQuery_FieldFilter_GREATER_THAN,
	"greater_than_or_equal": pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL,
	"equal_any":             pb.StructuredQuery_FieldFilter_IN,
	"array_contains":        pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS,
	"array_contains_any":    pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY,
}

// toFilter translates field OP constant when the classic filter matches
// exactly the same documents, and names the field it requires.
func toFilter(v *pb.Value) (*pb.StructuredQuery_Filter, string, bool) {
	f := v.GetFunctionValue()
	if f == nil || len(f.GetArgs()) != 2 {
		return nil, "", false
	}
	op, ok := fieldOps[f.GetName()]
	if !ok {
		return nil, "", false
	}
	ref, c := f.GetArgs()[0].GetFieldReferenceValue(), f.GetArgs()[1]
	path, err := firestore.ParseFieldPath(ref)
	if ref == "" || err != nil || !isConstant(c) || !pushable(c, op) {
		return nil, "", false
	}
	field := path.String()
	fr := &pb.StructuredQuery_FieldReference{FieldPath: field}
	if isNull(c) {
		if op != pb.StructuredQuery_FieldFilter_EQUAL {
			return nil, "", false
		}
		return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_UnaryFilter{UnaryFilter: &pb.StructuredQuery_UnaryFilter{
			Op: pb.StructuredQuery_UnaryFilter_IS_NULL, OperandType: &pb.StructuredQuery_UnaryFilter_Field{Field: fr},
		}}}, field, true
	}
	return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
		Field: fr, Op: op, Value: c,
	}}}, field, true
}

// pushable reports whether a constant means the same to the classic
// operator as to the pipeline function: no NaN, no null but in an
// equality, lists of at most 30 such values.
func pushable(c *pb.Value, op pb.StructuredQuery_FieldFilter_Operator) bool {
	if isNaN(c) || kindOf(c) >= kInt32 {
		return false
	}
	switch op {
	case pb.StructuredQuery_FieldFilter_IN, pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY:
		list := c.GetArrayValue()
		if kindOf(c) != kArray || len(list.GetValues()) == 0 || len(list.GetValues()) > 30 {
			return false
		}
		for _, el := range list.GetValues() {
			if isNaN(el) || isNull(el) || kindOf(el) >= kInt32 {
				return false
			}
		}
		return true
	case pb.StructuredQuery_FieldFilter_EQUAL:
		return true
	}
	return !isNull(c)
}

// existsField recognises exists(field).
func existsField(v *pb.Value) (string, bool) {
	f := v.GetFunctionValue()
	if f == nil || f.GetName() != "exists" || len(f.GetArgs()) != 1 {
		return "", false
	}
	ref := f.GetArgs()[0].GetFieldReferenceValue()
	path, err := firestore.ParseFieldPath(ref)
	if ref == "" || err != nil {
		return "", false
	}
	return path.String(), true
}

func existsCall(field string) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_FunctionValue{FunctionValue: &pb.Function{
		Name: "exists", Args: []*pb.Value{{ValueType: &pb.Value_FieldReferenceValue{FieldReferenceValue: field}}},
	}}}
}

// toOrders translates a sort on fields each result is known to have (a
// classic order drops documents without the field).
func toOrders(s *sortStage, present, wantExists map[string]bool) ([]*pb.StructuredQuery_Order, bool) {
	var out []*pb.StructuredQuery_Order
	for _, k := range s.keys {
		ref := k.raw.GetFieldReferenceValue()
		path, err := firestore.ParseFieldPath(ref)
		if ref == "" || err != nil {
			return nil, false
		}
		field := path.String()
		if field != "__name__" && !present[field] && !wantExists[field] {
			return nil, false
		}
		dir := pb.StructuredQuery_ASCENDING
		if k.desc {
			dir = pb.StructuredQuery_DESCENDING
		}
		out = append(out, &pb.StructuredQuery_Order{Field: &pb.StructuredQuery_FieldReference{FieldPath: field}, Direction: dir})
	}
	return out, true
}
