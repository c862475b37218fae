package rules

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Value is a rules value: nil (null), bool, int64, float64, string, []byte,
// []Value (list), map[string]Value (map), Path, time.Time, time.Duration, *MapDiff.
type Value = any

// Path is a path value such as /databases/(default)/documents/users/alice.
type Path string

// Set is a set value (list.toSet(), MapDiff key sets): unordered, no duplicates.
type Set []Value

// MapDiff is the result of a.diff(b): a compared to b.
type MapDiff struct{ A, B map[string]Value }

// evalError is an evaluation error: it denies the statement it occurs in.
type evalError struct{ msg string }

func (e *evalError) Error() string { return e.msg }

func errorf(format string, args ...any) *evalError { return &evalError{fmt.Sprintf(format, args...)} }

var errNull = &evalError{"Null value error."}

// Documents reads documents for get(), exists(), getAfter() and existsAfter().
// Paths are full rules paths (/databases/{db}/documents/…). A missing
// document is (nil, false, nil).
type Documents interface {
	Get(path string) (map[string]Value, bool, error)
	GetAfter(path string) (map[string]Value, bool, error)
}

// Request is one request to judge.
type Request struct {
	// Method is get, list, create, update or delete.
	Method string
	// Path is the resource path: /databases/{db}/documents/… for Firestore,
	// /b/{bucket}/o/… for Storage.
	Path string
	// Auth is request.auth ({"uid": …, "token": {…}}), nil when signed out.
	Auth map[string]Value
	// Resource is the stored resource (Firestore: {"data", "id", "__name__"}), nil when absent.
	Resource map[string]Value
	// RequestResource is request.resource for writes, nil otherwise.
	RequestResource map[string]Value
	// Query is request.query for list requests ({"limit", "offset", "orderBy"}).
	Query map[string]Value
	Time  time.Time
	// MaxReads bounds get()/exists() calls: 10 for single-document requests, 20 for batches.
	MaxReads int
}

// Decision is the verdict on a request; Message is the emulator's denial text.
type Decision struct {
	Allow   bool
	Message string
}

type candidate struct {
	allow *Allow
	vars  map[string]Value
	funcs [][]*Func // innermost scope last
}

// Evaluate judges req under the ruleset's service ("cloud.firestore" or "firebase.storage").
func (rs *Ruleset) Evaluate(service string, req *Request, docs Documents) Decision {
	var svc *Service
	for _, s := range rs.Services {
		if s.Name == service {
			svc = s
		}
	}
	if svc == nil {
		return Decision{Message: "No matching allow statements"}
	}
	segs := strings.Split(strings.Trim(req.Path, "/"), "/")
	var cands []candidate
	for _, m := range svc.Matches {
		collect(m, segs, map[string]Value{}, [][]*Func{rs.Funcs, svc.Funcs}, req.Method, rs.Version == "2", &cands)
	}
	if len(cands) == 0 {
		return Decision{Message: "No matching allow statements"}
	}
	max := req.MaxReads
	if max == 0 {
		max = 10
	}
	ev := &evaluator{req: req, docs: docs, maxReads: max}
	var reasons []string
	for _, c := range cands {
		if c.allow.Cond == nil {
			return Decision{Allow: true}
		}
		v, err := ev.eval(c.allow.Cond, &scope{vars: c.vars, funcs: c.funcs})
		if err == nil && v == true {
			return Decision{Allow: true}
		}
		reason := "false"
		if err != nil {
			reason = err.Error()
		}
		reasons = append(reasons, fmt.Sprintf("%s for '%s' @ L%d", reason, req.Method, c.allow.Pos.Line))
	}
	return Decision{Message: "\n" + strings.Join(reasons, ", ")}
}

// collect gathers the allow statements of blocks matching the whole path.
// In version 1 a {name=**} wildcard needs at least one segment; in version 2 it also matches none.
func collect(m *Match, segs []string, vars map[string]Value, funcs [][]*Func, method string, v2 bool, out *[]candidate) {
	i := 0
	bound := map[string]Value{}
	for k, v := range vars {
		bound[k] = v
	}
	for _, s := range m.Path {
		switch {
		case s.Recursive:
			if i > len(segs) || (!v2 && i == len(segs)) {
				return
			}
			bound[s.Var] = Path("/" + strings.Join(segs[i:], "/"))
			i = len(segs)
		case i >= len(segs):
			return
		case s.Var != "":
			bound[s.Var] = segs[i]
			i++
		case s.Literal == segs[i]:
			i++
		default:
			return
		}
	}
	scoped := append(append([][]*Func(nil), funcs...), m.Funcs)
	if i == len(segs) {
		for _, a := range m.Allows {
			if covers(a.Methods, method) {
				*out = append(*out, candidate{a, bound, scoped})
			}
		}
	}
	for _, child := range m.Matches {
		collect(child, segs[i:], bound, scoped, method, v2, out)
	}
}

func covers(list []string, method string) bool {
	for _, m := range list {
		if m == method || (m == "read" && (method == "get" || method == "list")) ||
			(m == "write" && (method == "create" || method == "update" || method == "delete")) {
			return true
		}
	}
	return false
}

type scope struct {
	vars   map[string]Value
	funcs  [][]*Func
	parent *scope
}

func (s *scope) lookup(name string) (Value, bool) {
	for sc := s; sc != nil; sc = sc.parent {
		if v, ok := sc.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

func (s *scope) function(name string) *Func {
	for i := len(s.funcs) - 1; i >= 0; i-- {
		for _, f := range s.funcs[i] {
			if f.Name == name {
				return f
			}
		}
	}
	return nil
}

type evaluator struct {
	req      *Request
	docs     Documents
	reads    int
	maxReads int
	depth    int
}

func (ev *evaluator) eval(e Expr, sc *scope) (Value, error) {
	switch x := e.(type) {
	case *Lit:
		return x.V, nil
	case *Ident:
		return ev.ident(x.Name, sc)
	case *Unary:
		v, err := ev.eval(x.X, sc)
		if err != nil {
			return nil, err
		}
		if x.Op == "!" {
			b, ok := v.(bool)
			if !ok {
				return nil, unsupported("!", v)
			}
			return !b, nil
		}
		switch n := v.(type) {
		case int64:
			return -n, nil
		case float64:
			return -n, nil
		}
		return nil, unsupported("-", v)
	case *Binary:
		return ev.binary(x, sc)
	case *Cond:
		c, err := ev.eval(x.C, sc)
		if err != nil {
			return nil, err
		}
		b, ok := c.(bool)
		if !ok {
			return nil, unsupported("?:", c)
		}
		if b {
			return ev.eval(x.Then, sc)
		}
		return ev.eval(x.E, sc)
	case *Member:
		v, err := ev.eval(x.X, sc)
		if err != nil {
			return nil, err
		}
		return member(v, x.Name)
	case *Index:
		v, err := ev.eval(x.X, sc)
		if err != nil {
			return nil, err
		}
		i, err := ev.eval(x.I, sc)
		if err != nil {
			return nil, err
		}
		return index(v, i)
	case *Slice:
		return ev.slice(x, sc)
	case *Call:
		return ev.call(x, sc)
	case *ListLit:
		out := make([]Value, 0, len(x.Elems))
		for _, el := range x.Elems {
			v, err := ev.eval(el, sc)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *MapLit:
		out := map[string]Value{}
		for i := range x.Keys {
			k, err := ev.eval(x.Keys[i], sc)
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, errorf("Map keys must be strings.")
			}
			v, err := ev.eval(x.Values[i], sc)
			if err != nil {
				return nil, err
			}
			out[ks] = v
		}
		return out, nil
	case *PathLit:
		var b strings.Builder
		for _, part := range x.Parts {
			b.WriteByte('/')
			if s, ok := part.(string); ok {
				b.WriteString(s)
				continue
			}
			v, err := ev.eval(part.(Expr), sc)
			if err != nil {
				return nil, err
			}
			if v == nil {
				return nil, errNull
			}
			b.WriteString(strings.Trim(fmt.Sprint(stringOf(v)), "/"))
		}
		return Path(b.String()), nil
	case *Is:
		v, err := ev.eval(x.X, sc)
		if err != nil {
			return nil, err
		}
		return isType(v, x.Type), nil
	}
	return nil, errorf("Unknown expression.")
}

func (ev *evaluator) ident(name string, sc *scope) (Value, error) {
	if v, ok := sc.lookup(name); ok {
		return v, nil
	}
	switch name {
	case "request":
		r := map[string]Value{"auth": nilIfEmpty(ev.req.Auth), "method": ev.req.Method, "path": Path(ev.req.Path), "time": ev.req.Time}
		if ev.req.RequestResource != nil {
			r["resource"] = ev.req.RequestResource
		}
		if ev.req.Query != nil {
			r["query"] = ev.req.Query
		}
		return r, nil
	case "resource":
		return nilIfEmpty(ev.req.Resource), nil
	}
	return nil, errorf("Property %s is undefined on object.", name)
}

func nilIfEmpty(m map[string]Value) Value {
	if m == nil {
		return nil
	}
	return m
}

func (ev *evaluator) binary(x *Binary, sc *scope) (Value, error) {
	if x.Op == "&&" || x.Op == "||" {
		decides := x.Op == "||" // the value of either side that decides the result
		l, lerr := ev.eval(x.X, sc)
		lb, lok := l.(bool)
		if lerr == nil && !lok {
			lerr = unsupported(x.Op, l)
		}
		if lerr == nil && lb == decides {
			return decides, nil
		}
		r, rerr := ev.eval(x.Y, sc)
		rb, rok := r.(bool)
		if rerr == nil && !rok {
			rerr = unsupported(x.Op, r)
		}
		if rerr == nil && rb == decides {
			return decides, nil
		}
		if lerr != nil {
			return nil, lerr
		}
		if rerr != nil {
			return nil, rerr
		}
		return !decides, nil
	}
	l, err := ev.eval(x.X, sc)
	if err != nil {
		return nil, err
	}
	r, err := ev.eval(x.Y, sc)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case "==":
		return equal(l, r), nil
	case "!=":
		return !equal(l, r), nil
	case "in":
		return contains(r, l)
	case "<", "<=", ">", ">=":
		c, err := compare(l, r)
		if err != nil {
			return nil, err
		}
		return map[string]bool{"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[x.Op], nil
	}
	return arithmetic(x.Op, l, r)
}

func unsupported(op string, v Value) *evalError {
	if v == nil {
		return errNull
	}
	return errorf("Unsupported operation error. Received: %s %s.", op, typeName(v))
}

func typeName(v Value) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "string"
	case []byte:
		return "bytes"
	case []Value:
		return "list"
	case map[string]Value:
		return "map"
	case Path:
		return "path"
	case time.Time:
		return "timestamp"
	case time.Duration:
		return "duration"
	case *MapDiff:
		return "map_diff"
	case Set:
		return "set"
	}
	return fmt.Sprintf("%T", v)
}

func isType(v Value, t string) bool {
	n := typeName(v)
	switch t {
	case "number":
		return n == "int" || n == "float"
	}
	return n == t
}

func number(v Value) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func equal(a, b Value) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	switch x := a.(type) {
	case []Value:
		y, ok := b.([]Value)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]Value:
		y, ok := b.(map[string]Value)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case Set:
		y, ok := b.(Set)
		if !ok || len(x) != len(y) {
			return false
		}
		for _, v := range x {
			if c, _ := contains([]Value(y), v); c != true {
				return false
			}
		}
		return true
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case Path:
		y, ok := b.(Path)
		return ok && strings.Trim(string(x), "/") == strings.Trim(string(y), "/")
	}
	return reflect.DeepEqual(a, b)
}

func compare(a, b Value) (int, error) {
	if x, ok := number(a); ok {
		if y, ok := number(b); ok {
			return cmp3(x < y, x > y), nil
		}
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y), nil
		}
	case time.Duration:
		if y, ok := b.(time.Duration); ok {
			return cmp3(x < y, x > y), nil
		}
	}
	if a == nil || b == nil {
		return 0, errNull
	}
	return 0, errorf("Unsupported operation error. Received: %s < %s.", typeName(a), typeName(b))
}

func cmp3(less, more bool) int {
	switch {
	case less:
		return -1
	case more:
		return 1
	}
	return 0
}

func contains(coll, v Value) (Value, error) {
	switch c := coll.(type) {
	case Set:
		return contains([]Value(c), v)
	case []Value:
		for _, e := range c {
			if equal(e, v) {
				return true, nil
			}
		}
		return false, nil
	case map[string]Value:
		k, ok := v.(string)
		if !ok {
			return nil, errorf("Map keys must be strings.")
		}
		_, in := c[k]
		return in, nil
	case nil:
		return nil, errNull
	}
	return nil, unsupported("in", coll)
}

func arithmetic(op string, l, r Value) (Value, error) {
	li, lInt := l.(int64)
	ri, rInt := r.(int64)
	if lInt && rInt {
		switch op {
		case "+":
			return li + ri, nil
		case "-":
			return li - ri, nil
		case "*":
			return li * ri, nil
		case "/", "%":
			if ri == 0 {
				return nil, errorf("Divide by zero error.")
			}
			if op == "/" {
				return li / ri, nil
			}
			return li % ri, nil
		}
	}
	if x, ok := number(l); ok {
		if y, ok := number(r); ok {
			switch op {
			case "+":
				return x + y, nil
			case "-":
				return x - y, nil
			case "*":
				return x * y, nil
			case "/":
				return x / y, nil
			case "%":
				return math.Mod(x, y), nil
			}
		}
	}
	if op == "+" {
		switch x := l.(type) {
		case string:
			if y, ok := r.(string); ok {
				return x + y, nil
			}
		case []Value:
			if y, ok := r.([]Value); ok {
				return append(append([]Value{}, x...), y...), nil
			}
		case time.Time:
			if y, ok := r.(time.Duration); ok {
				return x.Add(y), nil
			}
		}
	}
	if op == "-" {
		if x, ok := l.(time.Time); ok {
			switch y := r.(type) {
			case time.Duration:
				return x.Add(-y), nil
			case time.Time:
				return x.Sub(y), nil
			}
		}
	}
	if l == nil || r == nil {
		return nil, errNull
	}
	return nil, errorf("Unsupported operation error. Received: %s %s %s.", typeName(l), op, typeName(r))
}

func member(v Value, name string) (Value, error) {
	switch m := v.(type) {
	case map[string]Value:
		if x, ok := m[name]; ok {
			return x, nil
		}
		return nil, errorf("Property %s is undefined on object.", name)
	case nil:
		return nil, errNull
	}
	return nil, errorf("Property %s is undefined on object.", name)
}

func index(v, i Value) (Value, error) {
	switch c := v.(type) {
	case map[string]Value:
		k, ok := i.(string)
		if !ok {
			return nil, errorf("Map keys must be strings.")
		}
		return member(c, k)
	case []Value:
		n, ok := i.(int64)
		if !ok {
			return nil, unsupported("[]", i)
		}
		if n < 0 || n >= int64(len(c)) {
			return nil, errorf("Index out of bound error. Index: [%d] , size: [%d].", n, len(c))
		}
		return c[n], nil
	case Path:
		segs := strings.Split(strings.Trim(string(c), "/"), "/")
		n, ok := i.(int64)
		if !ok || n < 0 || n >= int64(len(segs)) {
			return nil, errorf("Index out of bound error.")
		}
		return segs[n], nil
	case nil:
		return nil, errNull
	}
	return nil, unsupported("[]", v)
}

func (ev *evaluator) slice(x *Slice, sc *scope) (Value, error) {
	v, err := ev.eval(x.X, sc)
	if err != nil {
		return nil, err
	}
	bound := func(e Expr, def int64) (int64, error) {
		if e == nil {
			return def, nil
		}
		b, err := ev.eval(e, sc)
		if err != nil {
			return 0, err
		}
		n, ok := b.(int64)
		if !ok {
			return 0, unsupported("[:]", b)
		}
		return n, nil
	}
	var n int64
	switch c := v.(type) {
	case []Value:
		n = int64(len(c))
	case string:
		n = int64(len(c))
	default:
		return nil, unsupported("[:]", v)
	}
	lo, err := bound(x.Lo, 0)
	if err != nil {
		return nil, err
	}
	hi, err := bound(x.Hi, n)
	if err != nil {
		return nil, err
	}
	if lo < 0 || hi > n || lo > hi {
		return nil, errorf("Index out of bound error. Index: [%d:%d] , size: [%d].", lo, hi, n)
	}
	if s, ok := v.(string); ok {
		return s[lo:hi], nil
	}
	return v.([]Value)[lo:hi], nil
}

func stringOf(v Value) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case Path:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

func toSet(v []Value) Set {
	out := Set{}
	for _, e := range v {
		dup := false
		for _, o := range out {
			if equal(o, e) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, e)
		}
	}
	return out
}

func keys(m map[string]Value) []Value {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	out := make([]Value, len(ks))
	for i, k := range ks {
		out[i] = k
	}
	return out
}

// regexps caches compiled patterns of matches() and replace().
var regexps sync.Map

// compileRegexp compiles a rules regular expression; anchored patterns must
// match the whole string (matches()), others any part (split(), replace()).
func compileRegexp(pattern string, anchored bool) (*regexp.Regexp, error) {
	key := pattern
	if anchored {
		key = "^(?:" + pattern + ")$"
	}
	if re, ok := regexps.Load(key); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(key)
	if err != nil {
		return nil, errorf("Invalid regular expression: %s", pattern)
	}
	regexps.Store(key, re)
	return re, nil
}
