package pull

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Filter is one condition of --where (a document field) or --user-query
// (an account attribute): FIELD OP VALUE, as ParseFilter reads it.
type Filter struct {
	Field string
	Op    string
	Value *pb.Value
}

// Order is one --order-by: a field and its direction.
type Order struct {
	Field string
	Desc  bool
}

// filterOps are the operators of --where, named as the Admin SDKs name
// them, with the structured query's operator each is.
var filterOps = map[string]pb.StructuredQuery_FieldFilter_Operator{
	"==": pb.StructuredQuery_FieldFilter_EQUAL, "!=": pb.StructuredQuery_FieldFilter_NOT_EQUAL,
	"<": pb.StructuredQuery_FieldFilter_LESS_THAN, "<=": pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL,
	">": pb.StructuredQuery_FieldFilter_GREATER_THAN, ">=": pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL,
	"in": pb.StructuredQuery_FieldFilter_IN, "not-in": pb.StructuredQuery_FieldFilter_NOT_IN,
	"array-contains": pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, "array-contains-any": pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY,
}

// matchesOp is --user-query's glob operator (path.Match's patterns), which
// Firestore has no counterpart of.
const matchesOp = "matches"

// ParseFilter reads "FIELD OP VALUE": FIELD a field path (dotted, with
// `back quotes` around a segment that needs them), OP one of == != < <= >
// >= in not-in array-contains array-contains-any (and, when users is set,
// matches: a glob), VALUE JSON (a number, "a string", true, false, null,
// [a, list]) or, bare, an RFC 3339 time (a timestamp) or else a string.
func ParseFilter(s string, users bool) (Filter, error) {
	field, rest, err := splitField(strings.TrimSpace(s))
	if err != nil {
		return Filter{}, fmt.Errorf("%q: %w", s, err)
	}
	op, value, _ := strings.Cut(strings.TrimSpace(rest), " ")
	if _, ok := filterOps[op]; !ok && !(users && op == matchesOp) {
		known := "==, !=, <, <=, >, >=, in, not-in, array-contains, array-contains-any"
		if users {
			known += ", matches"
		}
		return Filter{}, fmt.Errorf("%q: %q is not an operator (use %s, with spaces around it)", s, op, known)
	}
	value = strings.TrimSpace(value)
	if value == "" {
		return Filter{}, fmt.Errorf("%q: no value after %s", s, op)
	}
	v, err := parseValue(value)
	if err != nil {
		return Filter{}, fmt.Errorf("%q: %w", s, err)
	}
	listOp := op == "in" || op == "not-in" || op == "array-contains-any"
	if _, isList := v.ValueType.(*pb.Value_ArrayValue); listOp != isList {
		if listOp {
			return Filter{}, fmt.Errorf("%q: %s takes a list, as in [\"a\", \"b\"]", s, op)
		}
		if op != "==" && op != "!=" && op != "array-contains" {
			return Filter{}, fmt.Errorf("%q: %s does not compare with a list", s, op)
		}
	}
	return Filter{Field: field, Op: op, Value: v}, nil
}

// ParseOrder reads "FIELD [asc|desc]".
func ParseOrder(s string) (Order, error) {
	field, rest, err := splitField(strings.TrimSpace(s))
	if err != nil {
		return Order{}, fmt.Errorf("%q: %w", s, err)
	}
	switch strings.ToLower(strings.TrimSpace(rest)) {
	case "", "asc", "ascending":
		return Order{Field: field}, nil
	case "desc", "descending":
		return Order{Field: field, Desc: true}, nil
	}
	return Order{}, fmt.Errorf("%q: the direction is asc or desc", s)
}

// splitField takes the field path off the front of s.
func splitField(s string) (field, rest string, err error) {
	quoted := false
	for i, r := range s {
		if r == '`' {
			quoted = !quoted
		} else if r == ' ' && !quoted {
			return s[:i], s[i+1:], checkField(s[:i])
		}
	}
	if quoted {
		return "", "", fmt.Errorf("a back quote is not closed")
	}
	return s, "", checkField(s)
}

func checkField(f string) error {
	if f == "" {
		return fmt.Errorf("no field")
	}
	for _, seg := range fieldSegments(f) {
		if seg == "" {
			return fmt.Errorf("field %q has an empty segment", f)
		}
	}
	return nil
}

// fieldSegments splits a field path at the dots outside back quotes and
// drops the quotes.
func fieldSegments(f string) []string {
	var segs []string
	var b strings.Builder
	quoted := false
	for _, r := range f {
		switch {
		case r == '`':
			quoted = !quoted
		case r == '.' && !quoted:
			segs = append(segs, b.String())
			b.Reset()
		default:
			b.WriteRune(r)
		}
	}
	return append(segs, b.String())
}

// parseValue reads a --where value: JSON, else an RFC 3339 time, else the
// text itself.
func parseValue(s string) (*pb.Value, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && !dec.More() {
		return jsonValue(v)
	} else if strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{") || strings.HasPrefix(s, `"`) {
		return nil, fmt.Errorf("the value %s is not valid JSON: %v", s, err)
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: timestamppb.New(t)}}, nil
	}
	return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: s}}, nil
}

func jsonValue(v any) (*pb.Value, error) {
	switch x := v.(type) {
	case nil:
		return &pb.Value{ValueType: &pb.Value_NullValue{NullValue: structpb.NullValue_NULL_VALUE}}, nil
	case bool:
		return &pb.Value{ValueType: &pb.Value_BooleanValue{BooleanValue: x}}, nil
	case string:
		return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: x}}, nil
	case json.Number:
		if n, err := x.Int64(); err == nil && !strings.ContainsAny(x.String(), ".eE") {
			return &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: n}}, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, err
		}
		return &pb.Value{ValueType: &pb.Value_DoubleValue{DoubleValue: f}}, nil
	case []any:
		arr := &pb.ArrayValue{}
		for _, e := range x {
			ev, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			arr.Values = append(arr.Values, ev)
		}
		return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: arr}}, nil
	case map[string]any:
		m := &pb.MapValue{Fields: map[string]*pb.Value{}}
		for k, e := range x {
			ev, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			m.Fields[k] = ev
		}
		return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: m}}, nil
	}
	return nil, fmt.Errorf("unsupported value %v", v)
}

// isInequality reports whether op orders the results by its field
// (Firestore orders a query by each field an inequality filters).
func isInequality(op string) bool {
	return op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=" || op == "not-in"
}

// fieldRef is the structured query's reference to a field path.
func fieldRef(f string) *pb.StructuredQuery_FieldReference {
	return &pb.StructuredQuery_FieldReference{FieldPath: f}
}

// whereOf is the structured query's filter of fs (nil for none), with
// __name__ values given as paths made references under root (a bare id
// relative to collection).
func whereOf(fs []Filter, root, collection string) *pb.StructuredQuery_Filter {
	var out []*pb.StructuredQuery_Filter
	for _, f := range fs {
		v := f.Value
		if f.Field == nameField {
			v = nameValues(v, root, collection)
		}
		out = append(out, &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
			Field: fieldRef(f.Field), Op: filterOps[f.Op], Value: v}}})
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_CompositeFilter{CompositeFilter: &pb.StructuredQuery_CompositeFilter{
		Op: pb.StructuredQuery_CompositeFilter_AND, Filters: out}}}
}

// nameField is the field path of a document's name.
const nameField = "__name__"

// nameValues turns string values compared with __name__ into references.
func nameValues(v *pb.Value, root, collection string) *pb.Value {
	switch x := v.ValueType.(type) {
	case *pb.Value_StringValue:
		p := x.StringValue
		if !strings.Contains(p, "/") {
			p = collection + "/" + p
		}
		return refValue(root + "/" + strings.TrimPrefix(p, "/"))
	case *pb.Value_ArrayValue:
		arr := &pb.ArrayValue{}
		for _, e := range x.ArrayValue.Values {
			arr.Values = append(arr.Values, nameValues(e, root, collection))
		}
		return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: arr}}
	}
	return v
}

func refValue(name string) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: name}}
}

// effectiveOrder is the order a query's results come in, as Firestore
// orders them: the --order-by fields, then each field an inequality
// filters that they do not name (in field order), then the document name
// in the last one's direction. Pages of the query resume after the last
// document's values of these fields.
func effectiveOrder(orders []Order, fs []Filter) []Order {
	out := slices.Clone(orders)
	named := map[string]bool{}
	for _, o := range orders {
		named[o.Field] = true
	}
	var extra []string
	for _, f := range fs {
		if isInequality(f.Op) && !named[f.Field] {
			named[f.Field] = true
			extra = append(extra, f.Field)
		}
	}
	slices.Sort(extra)
	desc := len(orders) > 0 && orders[len(orders)-1].Desc
	for _, f := range extra {
		out = append(out, Order{Field: f, Desc: desc})
	}
	if !named[nameField] {
		if len(out) > 0 {
			desc = out[len(out)-1].Desc
		}
		out = append(out, Order{Field: nameField, Desc: desc})
	}
	return out
}

// orderOf is the structured query's order of os.
func orderOf(os []Order) []*pb.StructuredQuery_Order {
	out := make([]*pb.StructuredQuery_Order, len(os))
	for i, o := range os {
		dir := pb.StructuredQuery_ASCENDING
		if o.Desc {
			dir = pb.StructuredQuery_DESCENDING
		}
		out[i] = &pb.StructuredQuery_Order{Field: fieldRef(o.Field), Direction: dir}
	}
	return out
}

// cursorAfter is the cursor that starts a query's next page after doc,
// ordered by os: copies of doc's values of those fields (the document may
// be redacted after).
func cursorAfter(doc *pb.Document, os []Order) *pb.Cursor {
	c := &pb.Cursor{Before: false}
	for _, o := range os {
		if o.Field == nameField {
			c.Values = append(c.Values, refValue(doc.Name))
			continue
		}
		c.Values = append(c.Values, proto.Clone(fieldValue(doc.Fields, fieldSegments(o.Field))).(*pb.Value))
	}
	return c
}

// fieldValue is the value at a field path, null when it is missing.
func fieldValue(fields map[string]*pb.Value, segs []string) *pb.Value {
	v := fields[segs[0]]
	for _, s := range segs[1:] {
		v = v.GetMapValue().GetFields()[s]
	}
	if v == nil {
		return &pb.Value{ValueType: &pb.Value_NullValue{}}
	}
	return v
}

// matches reports whether a Go value (an account attribute: a string, a
// bool, a number, a time, a list of strings, or nil when missing) passes f.
func (f Filter) matches(v any) bool {
	want := goValue(f.Value)
	switch f.Op {
	case "==":
		return compare(v, want) == 0
	case "!=":
		return v != nil && compare(v, want) != 0
	case "<", "<=", ">", ">=":
		c, ok := compareOrdered(v, want)
		if !ok {
			return false
		}
		return map[string]bool{"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[f.Op]
	case "in", "not-in":
		list, _ := want.([]any)
		in := slices.ContainsFunc(list, func(w any) bool { return compare(v, w) == 0 })
		return in == (f.Op == "in") && (f.Op == "in" || v != nil)
	case "array-contains":
		list, _ := v.([]string)
		return slices.ContainsFunc(list, func(s string) bool { return compare(s, want) == 0 })
	case "array-contains-any":
		list, _ := v.([]string)
		wants, _ := want.([]any)
		return slices.ContainsFunc(list, func(s string) bool {
			return slices.ContainsFunc(wants, func(w any) bool { return compare(s, w) == 0 })
		})
	case matchesOp:
		s, ok := v.(string)
		pattern, _ := want.(string)
		ok2, err := path.Match(pattern, s)
		return ok && err == nil && ok2
	}
	return false
}

// goValue is a parsed --user-query value as a Go value.
func goValue(v *pb.Value) any {
	switch x := v.ValueType.(type) {
	case *pb.Value_BooleanValue:
		return x.BooleanValue
	case *pb.Value_IntegerValue:
		return float64(x.IntegerValue)
	case *pb.Value_DoubleValue:
		return x.DoubleValue
	case *pb.Value_StringValue:
		return x.StringValue
	case *pb.Value_TimestampValue:
		return x.TimestampValue.AsTime()
	case *pb.Value_ArrayValue:
		out := []any{}
		for _, e := range x.ArrayValue.Values {
			out = append(out, goValue(e))
		}
		return out
	}
	return nil
}

// compare is 0 when a and b are equal, else nonzero.
func compare(a, b any) int {
	if c, ok := compareOrdered(a, b); ok {
		return c
	}
	if a == nil && b == nil {
		return 0
	}
	if x, ok := a.(bool); ok {
		if y, ok := b.(bool); ok && x == y {
			return 0
		}
	}
	return 1
}

// compareOrdered compares two strings, numbers or times.
func compareOrdered(a, b any) (int, bool) {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), true
		}
	case float64:
		if y, ok := b.(float64); ok {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y), true
		}
	}
	return 0, false
}
