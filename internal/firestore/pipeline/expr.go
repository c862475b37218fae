package pipeline

import (
	"strconv"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/firestore"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// row is what flows between stages: a document (name and times set when
// it came from a stored one) or a computed row.
type row struct {
	name           string
	create, update *timestamppb.Timestamp
	fields         map[string]*pb.Value
	vars           map[string]val // bound by let stages
}

// scope is what an expression sees: the row, the variables in scope and
// the run (for subqueries and the request time).
type scope struct {
	run   *run
	row   *row
	vars  map[string]val
	score float64 // accumulated by document_matches in a search query
}

// with is a scope with one more variable.
func (s *scope) with(name string, v val) *scope {
	vars := make(map[string]val, len(s.vars)+1)
	for k, x := range s.vars {
		vars[k] = x
	}
	vars[name] = v
	return &scope{run: s.run, row: s.row, vars: vars}
}

// expr is a compiled expression.
type expr interface {
	eval(s *scope) val
}

type constExpr struct{ v *pb.Value }

func (e constExpr) eval(*scope) val { return of(e.v) }

// fieldExpr reads a field of the row; __name__, __create_time__ and
// __update_time__ read the document's.
type fieldExpr struct {
	path firestore.FieldPath
}

func (e fieldExpr) eval(s *scope) val {
	r := s.row
	if len(e.path) == 1 {
		switch e.path[0] {
		case "__name__":
			if r.name == "" {
				return absent
			}
			return of(refV(r.name))
		case "__create_time__":
			if r.create == nil {
				return absent
			}
			return of(&pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: r.create}})
		case "__update_time__":
			if r.update == nil {
				return absent
			}
			return of(&pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: r.update}})
		}
	}
	v, ok := firestore.GetField(r.fields, e.path)
	if !ok {
		return absent
	}
	return of(v)
}

type varExpr struct{ name string }

func (e varExpr) eval(s *scope) val {
	if v, ok := s.vars[e.name]; ok {
		return v
	}
	if v, ok := s.row.vars[e.name]; ok {
		return v
	}
	return failf("Variable %q is not defined.", e.name)
}

// arrayExpr and mapExpr are literals with expressions inside.
type arrayExpr struct{ elems []expr }

func (e arrayExpr) eval(s *scope) val {
	out := make([]*pb.Value, 0, len(e.elems))
	for _, el := range e.elems {
		x := el.eval(s)
		if x.isError() {
			return x
		}
		if x.isAbsent() {
			x = of(nullV)
		}
		out = append(out, x.v)
	}
	return of(arrayV(out))
}

type mapExpr struct{ fields map[string]expr }

func (e mapExpr) eval(s *scope) val {
	out := make(map[string]*pb.Value, len(e.fields))
	for k, el := range e.fields {
		x := el.eval(s)
		if x.isError() {
			return x
		}
		if !x.isAbsent() {
			out[k] = x.v
		}
	}
	return of(mapV(out))
}

// call is a function applied to its (unevaluated) arguments.
type call struct {
	fn   *function
	args []expr
	opts map[string]*pb.Value
	sub  *compiled // a subquery argument (scalar, array)
}

func (c *call) eval(s *scope) val { return c.fn.eval(c, s) }

// arg evaluates argument i.
func (c *call) arg(s *scope, i int) val { return c.args[i].eval(s) }

// function is one entry of the catalogue.
type function struct {
	name     string
	min, max int // arity; max -1: any number
	eval     func(c *call, s *scope) val
}

// catalogue holds every function by name; families register in init.
var catalogue = map[string]*function{}

func register(name string, min, max int, eval func(c *call, s *scope) val) {
	catalogue[name] = &function{name: name, min: min, max: max, eval: eval}
}

// invalid is a request error of kind INVALID_ARGUMENT.
func invalid(format string, args ...any) error {
	return errs.Errorf(errs.InvalidArgument, format, args...)
}

// compileExpr compiles a pipeline value into an expression.
func compileExpr(v *pb.Value, depth int) (expr, error) {
	if depth > maxDepth {
		return nil, invalid("Pipeline expression is nested too deeply (more than %d levels).", maxDepth)
	}
	switch t := v.GetValueType().(type) {
	case nil:
		return nil, invalid("A pipeline expression has no value.")
	case *pb.Value_FieldReferenceValue:
		path, err := parseField(t.FieldReferenceValue)
		if err != nil {
			return nil, err
		}
		return fieldExpr{path: path}, nil
	case *pb.Value_VariableReferenceValue:
		return varExpr{name: t.VariableReferenceValue}, nil
	case *pb.Value_FunctionValue:
		return compileCall(t.FunctionValue, depth)
	case *pb.Value_PipelineValue:
		return nil, invalid("A pipeline can only be used as the argument of array(...) or scalar(...).")
	case *pb.Value_ArrayValue:
		if isConstant(v) {
			return constExpr{v}, nil
		}
		elems := make([]expr, len(t.ArrayValue.GetValues()))
		for i, el := range t.ArrayValue.GetValues() {
			x, err := compileExpr(el, depth+1)
			if err != nil {
				return nil, err
			}
			elems[i] = x
		}
		return arrayExpr{elems}, nil
	case *pb.Value_MapValue:
		if isConstant(v) {
			return constExpr{v}, nil
		}
		fields := make(map[string]expr, len(t.MapValue.GetFields()))
		for k, el := range t.MapValue.GetFields() {
			x, err := compileExpr(el, depth+1)
			if err != nil {
				return nil, err
			}
			fields[k] = x
		}
		return mapExpr{fields}, nil
	}
	return constExpr{v}, nil
}

const maxDepth = 100

// isConstant reports whether a value holds no expression.
func isConstant(v *pb.Value) bool {
	switch t := v.GetValueType().(type) {
	case *pb.Value_FieldReferenceValue, *pb.Value_VariableReferenceValue, *pb.Value_FunctionValue, *pb.Value_PipelineValue:
		return false
	case *pb.Value_ArrayValue:
		for _, el := range t.ArrayValue.GetValues() {
			if !isConstant(el) {
				return false
			}
		}
	case *pb.Value_MapValue:
		for _, el := range t.MapValue.GetFields() {
			if !isConstant(el) {
				return false
			}
		}
	}
	return true
}

func parseField(s string) (firestore.FieldPath, error) {
	if s == "" {
		return nil, invalid("A field reference must not be empty.")
	}
	path, err := firestore.ParseFieldPath(s)
	if err != nil {
		return nil, invalid("Invalid field path %q.", s)
	}
	return path, nil
}

func compileCall(f *pb.Function, depth int) (expr, error) {
	fn, ok := catalogue[f.GetName()]
	if !ok {
		if _, isAgg := aggregates[f.GetName()]; isAgg {
			return nil, invalid("Aggregate function %s(...) can only be used in an aggregate stage.", f.GetName())
		}
		return nil, invalid("Function %s(...) is not supported.", f.GetName())
	}
	if err := checkArity(fn, len(f.GetArgs())); err != nil {
		return nil, err
	}
	c := &call{fn: fn, opts: f.GetOptions()}
	for _, a := range f.GetArgs() {
		if p := a.GetPipelineValue(); p != nil {
			if fn.name != "array" && fn.name != "scalar" || len(f.GetArgs()) != 1 {
				return nil, invalid("A pipeline can only be used as the argument of array(...) or scalar(...).")
			}
			sub, err := compilePipeline(p, true, depth+1)
			if err != nil {
				return nil, err
			}
			c.sub = sub
			continue
		}
		x, err := compileExpr(a, depth+1)
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, x)
	}
	return c, nil
}

func checkArity(fn *function, n int) error {
	if n < fn.min || (fn.max >= 0 && n > fn.max) {
		hi := "∞"
		if fn.max >= 0 {
			hi = strconv.Itoa(fn.max)
		}
		return invalid("Function %s(...) takes [%d..%s] argument(s), but %d were provided.", fn.name, fn.min, hi, n)
	}
	return nil
}

// typeError is the error value of a function given an argument of the
// wrong type.
func typeError(fn, want string, got val) val {
	if got.isError() {
		return got
	}
	return failf("The function %s(...) requires `%s` but got `%s`.", fn, want, gotName(got))
}
