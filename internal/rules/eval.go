package rules

import (
	"math"
	"time"
)

// scope is a lexical level of function declarations.
type scope struct {
	funcs  map[string]*funcDecl
	parent *scope
}

func (s *scope) lookup(name string) *funcDecl {
	for ; s != nil; s = s.parent {
		if f, ok := s.funcs[name]; ok {
			return f
		}
	}
	return nil
}

const (
	maxCallDepth   = 20
	maxExpressions = 1000
)

// evaluator holds the per-request state shared by every expression of one request.
type evaluator struct {
	req      *Request
	request  map[string]any
	resource any
	reads    map[string]struct{}
	limit    int
	steps    int
	trace    *tracer // nil unless tracing
}

// env is the variable environment of an expression.
type env struct {
	ev       *evaluator
	locals   map[string]any
	bindings map[string]any
	scope    *scope
	depth    int
}

func (e *env) eval(n node) (any, error) {
	v, err := e.evalNode(n)
	if e.ev.trace != nil {
		e.ev.trace.record(n, v, err)
	}
	return v, err
}

func (e *env) evalNode(n node) (any, error) {
	e.ev.steps++
	if e.ev.steps > maxExpressions {
		return nil, errf("Exceeded maximum number of expressions evaluated.")
	}
	switch n := n.(type) {
	case *litNode:
		return n.v, nil
	case *identNode:
		return e.lookup(n.name)
	case *listNode:
		l := make([]any, len(n.elems))
		for i, x := range n.elems {
			v, err := e.eval(x)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return l, nil
	case *mapNode:
		m := make(map[string]any, len(n.keys))
		for i := range n.keys {
			k, err := e.eval(n.keys[i])
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, errf("Map keys must be strings, got %s.", typeName(k))
			}
			v, err := e.eval(n.vals[i])
			if err != nil {
				return nil, err
			}
			m[ks] = v
		}
		return m, nil
	case *pathNode:
		return e.path(n)
	case *unNode:
		v, err := e.eval(n.x)
		if err != nil {
			return nil, err
		}
		return unary(n.op, v)
	case *binNode:
		switch n.op {
		case "&&", "||":
			return e.logic(n)
		}
		l, err := e.eval(n.l)
		if err != nil {
			return nil, err
		}
		r, err := e.eval(n.r)
		if err != nil {
			return nil, err
		}
		return binop(n.op, l, r)
	case *isNode:
		v, err := e.eval(n.x)
		if err != nil {
			return nil, err
		}
		return isType(v, n.typ), nil
	case *condNode:
		c, err := e.eval(n.c)
		if err != nil {
			return nil, err
		}
		b, ok := c.(bool)
		if !ok {
			return nil, errf("Condition must be a bool, got %s.", typeName(c))
		}
		if b {
			return e.eval(n.a)
		}
		return e.eval(n.b)
	case *memberNode:
		v, err := e.eval(n.x)
		if err != nil {
			return nil, err
		}
		return member(v, n.name)
	case *indexNode:
		v, err := e.eval(n.x)
		if err != nil {
			return nil, err
		}
		i, err := e.eval(n.i)
		if err != nil {
			return nil, err
		}
		return index(v, i)
	case *sliceNode:
		return e.slice(n)
	case *callNode:
		return e.call(n)
	}
	return nil, errf("unknown expression")
}

func (e *env) lookup(name string) (any, error) {
	v, ok := e.locals[name]
	if !ok {
		v, ok = e.bindings[name]
	}
	if ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v, nil
	}
	switch name {
	case "request":
		return e.ev.request, nil
	case "resource":
		return e.ev.resource, nil
	}
	return nil, errf("Unknown variable %s.", name)
}

// logic implements && and || as Firebase rules do: both sides are
// evaluated, and a side that alone decides (false for &&, true for ||)
// wins even when the other side is an error, whichever side errs; only
// when neither decides is an error (the left one first) the result.
func (e *env) logic(n *binNode) (any, error) {
	decisive := n.op == "||"
	l, lerr := e.eval(n.l)
	if lerr == nil {
		b, ok := l.(bool)
		if !ok {
			lerr = errf("Logical operands must be bool, got %s.", typeName(l))
		} else if b == decisive {
			return b, nil
		}
	}
	r, rerr := e.eval(n.r)
	if rerr == nil {
		b, ok := r.(bool)
		if !ok {
			rerr = errf("Logical operands must be bool, got %s.", typeName(r))
		} else if b == decisive {
			return b, nil
		}
	}
	if lerr != nil {
		return nil, lerr
	}
	if rerr != nil {
		return nil, rerr
	}
	return !decisive, nil
}

func (e *env) path(n *pathNode) (any, error) {
	p := make(Path, 0, len(n.segs))
	for _, parts := range n.segs {
		seg := ""
		for _, part := range parts {
			if lit, ok := part.(*litNode); ok {
				if s, isStr := lit.v.(string); isStr {
					seg += s
					continue
				}
			}
			v, err := e.eval(part)
			if err != nil {
				return nil, err
			}
			if v == nil {
				return nil, errNull
			}
			s, err := toString(v)
			if err != nil {
				return nil, err
			}
			seg += s
		}
		p = append(p, seg)
	}
	return p, nil
}

func (e *env) slice(n *sliceNode) (any, error) {
	v, err := e.eval(n.x)
	if err != nil {
		return nil, err
	}
	var size int
	switch x := v.(type) {
	case string:
		size = len([]rune(x))
	case []any:
		size = len(x)
	case nil:
		return nil, errNull
	default:
		return nil, errUnsupported(typeName(v), "range")
	}
	bound := func(b node, def int) (int, error) {
		if b == nil {
			return def, nil
		}
		bv, err := e.eval(b)
		if err != nil {
			return 0, err
		}
		i, ok := bv.(int64)
		if !ok {
			return 0, errUnsupported(typeName(v), "range", typeName(bv))
		}
		if i < 0 || i > int64(size) {
			return 0, errf("Index out of bound error. Index: [%d] , size: [%d].", i, size)
		}
		return int(i), nil
	}
	lo, err := bound(n.lo, 0)
	if err != nil {
		return nil, err
	}
	hi, err := bound(n.hi, size)
	if err != nil {
		return nil, err
	}
	if lo > hi {
		return nil, errf("Index out of bound error. Index: [%d] , size: [%d].", lo, hi)
	}
	if s, ok := v.(string); ok {
		return string([]rune(s)[lo:hi]), nil
	}
	return append([]any(nil), v.([]any)[lo:hi]...), nil
}

func unary(op string, v any) (any, error) {
	if op == "!" {
		b, ok := v.(bool)
		if !ok {
			if v == nil {
				return nil, errNull
			}
			return nil, errUnsupported(typeName(v), "not")
		}
		return !b, nil
	}
	switch x := v.(type) {
	case int64:
		if x == math.MinInt64 {
			return nil, errf("Integer overflow error.")
		}
		return -x, nil
	case float64:
		return -x, nil
	case time.Duration:
		return -x, nil
	case nil:
		return nil, errNull
	}
	return nil, errUnsupported(typeName(v), "neg")
}

func binop(op string, l, r any) (any, error) {
	l, r = norm(l), norm(r)
	if _, ok := flipped[op]; ok {
		_, lc := l.(*constraint)
		_, rc := r.(*constraint)
		if lc || rc {
			return constraintOp(op, l, r)
		}
	}
	switch op {
	case "==":
		return equal(l, r), nil
	case "!=":
		return !equal(l, r), nil
	case "<", "<=", ">", ">=":
		c, err := compare(l, r)
		if err != nil {
			return nil, err
		}
		switch op {
		case "<":
			return c < 0, nil
		case "<=":
			return c <= 0, nil
		case ">":
			return c > 0, nil
		}
		return c >= 0, nil
	case "in":
		return in(l, r)
	}
	return arith(op, l, r)
}

func in(v, coll any) (any, error) {
	switch c := coll.(type) {
	case []any:
		return contains(c, v), nil
	case *Set:
		return contains(c.items, v), nil
	case *containsList:
		if contains(c.v, v) {
			return true, nil
		}
		return nil, errf("Unknown list contents in a query.")
	case map[string]any:
		k, ok := v.(string)
		if !ok {
			return nil, errf("Unsupported operation error. Received: map.in(%s). Expected: map.in(string).", typeName(v))
		}
		_, has := c[k]
		return has, nil
	case nil:
		return nil, errNull
	}
	return nil, errNoFunc("in")
}

func arith(op string, l, r any) (any, error) {
	if l == nil || r == nil {
		return nil, errNull
	}
	switch x := l.(type) {
	case int64:
		switch y := r.(type) {
		case int64:
			return intArith(op, x, y)
		case float64:
			return floatArith(op, float64(x), y)
		}
	case float64:
		switch y := r.(type) {
		case int64:
			return floatArith(op, x, float64(y))
		case float64:
			return floatArith(op, x, y)
		}
	case string:
		if y, ok := r.(string); ok && op == "+" {
			return x + y, nil
		}
	case []any:
		if y, ok := r.([]any); ok && op == "+" {
			return append(append([]any(nil), x...), y...), nil
		}
	case time.Time:
		switch y := r.(type) {
		case time.Duration:
			if op == "+" {
				return x.Add(y), nil
			}
			if op == "-" {
				return x.Add(-y), nil
			}
		case time.Time:
			if op == "-" {
				return x.Sub(y), nil
			}
		}
	case time.Duration:
		switch y := r.(type) {
		case time.Duration:
			if op == "+" {
				return x + y, nil
			}
			if op == "-" {
				return x - y, nil
			}
		case time.Time:
			if op == "+" {
				return y.Add(x), nil
			}
		}
	}
	return nil, errUnsupported(typeName(l), opNames[op], typeName(r))
}

var opNames = map[string]string{"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod"}

func intArith(op string, x, y int64) (any, error) {
	switch op {
	case "+":
		s := x + y
		if (s > x) != (y > 0) {
			return nil, errf("Integer overflow error.")
		}
		return s, nil
	case "-":
		s := x - y
		if (s < x) != (y > 0) {
			return nil, errf("Integer overflow error.")
		}
		return s, nil
	case "*":
		if x != 0 && ((x*y)/x != y || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64)) {
			return nil, errf("Integer overflow error.")
		}
		return x * y, nil
	case "/", "%":
		if y == 0 {
			return nil, errDivZero
		}
		if x == math.MinInt64 && y == -1 {
			return nil, errf("Integer overflow error.")
		}
		if op == "/" {
			return x / y, nil
		}
		return x % y, nil
	}
	return nil, errUnsupported("int", op, "int")
}

func floatArith(op string, x, y float64) (any, error) {
	switch op {
	case "+":
		return x + y, nil
	case "-":
		return x - y, nil
	case "*":
		return x * y, nil
	case "/":
		return x / y, nil
	}
	return math.Mod(x, y), nil
}

// member implements a.f: map fields, path captures, and unknown names.
func member(v any, name string) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		f, ok := x[name]
		if !ok {
			return nil, errUndefined(name)
		}
		if err, bad := f.(error); bad {
			return nil, err
		}
		return norm(f), nil
	case nil:
		return nil, errNull
	}
	return nil, errUndefined(name)
}

func index(v, i any) (any, error) {
	i = norm(i)
	switch x := v.(type) {
	case map[string]any:
		k, ok := i.(string)
		if !ok {
			return nil, errUnsupported("map", "get", typeName(i))
		}
		return member(x, k)
	case []any, string, Path:
		n, ok := i.(int64)
		if !ok {
			if k, isStr := i.(string); isStr {
				if _, isPath := v.(Path); isPath {
					return nil, errUndefined(k)
				}
			}
			return nil, errUnsupported(typeName(v), "get", typeName(i))
		}
		switch x := x.(type) {
		case []any:
			if n < 0 || n >= int64(len(x)) {
				return nil, errf("Index out of bound error. Index: [%d] , size: [%d].", n, len(x))
			}
			return norm(x[n]), nil
		case Path:
			if n < 0 || n >= int64(len(x)) {
				return nil, errf("Index out of bound error. Index: [%d] , size: [%d].", n, len(x))
			}
			return x[n], nil
		case string:
			rs := []rune(x)
			if n < 0 || n >= int64(len(rs)) {
				return nil, errf("Index out of bound error. Index: [%d] , size: [%d].", n, len(rs))
			}
			return string(rs[n]), nil
		}
	case nil:
		return nil, errNull
	}
	return nil, errUnsupported(typeName(v), "get", typeName(i))
}

// callFunc invokes a user function with evaluated arguments.
func (e *env) callFunc(f *funcDecl, args []any) (any, error) {
	if len(args) != len(f.params) {
		return nil, errf("Function %s expects %d arguments, got %d.", f.name, len(f.params), len(args))
	}
	if e.depth >= maxCallDepth {
		return nil, errf("Maximum function call depth exceeded.")
	}
	locals := make(map[string]any, len(args)+len(f.lets))
	for i, p := range f.params {
		locals[p] = args[i]
	}
	inner := &env{ev: e.ev, locals: locals, bindings: e.bindings, scope: f.scope, depth: e.depth + 1}
	for _, l := range f.lets {
		v, err := inner.eval(l.x)
		if err != nil {
			// A failing let only fails the function if the body reads it.
			locals[l.name] = err
			continue
		}
		locals[l.name] = v
	}
	return inner.eval(f.body)
}
