package rules

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// maxCallDepth bounds function calls (production allows 20).
const maxCallDepth = 20

func (ev *evaluator) call(x *Call, sc *scope) (Value, error) {
	args := make([]Value, len(x.Args))
	for i, a := range x.Args {
		v, err := ev.eval(a, sc)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	switch fn := x.Fn.(type) {
	case *Ident:
		if f := sc.function(fn.Name); f != nil {
			return ev.userFunc(f, args, sc)
		}
		return ev.global(fn.Name, args)
	case *Member:
		if ns, ok := fn.X.(*Ident); ok {
			if _, shadowed := sc.lookup(ns.Name); !shadowed {
				switch ns.Name {
				case "math", "timestamp", "duration", "firestore", "string":
					return ev.global(ns.Name+"."+fn.Name, args)
				}
			}
		}
		recv, err := ev.eval(fn.X, sc)
		if err != nil {
			return nil, err
		}
		return method(recv, fn.Name, args)
	}
	return nil, errorf("Function not found error.")
}

func (ev *evaluator) userFunc(f *Func, args []Value, sc *scope) (Value, error) {
	if len(args) != len(f.Params) {
		return nil, errorf("Function %s expects %d arguments, got %d.", f.Name, len(f.Params), len(args))
	}
	if ev.depth >= maxCallDepth {
		return nil, errorf("Maximum function call depth exceeded.")
	}
	ev.depth++
	defer func() { ev.depth-- }()
	vars := map[string]Value{}
	for i, p := range f.Params {
		vars[p] = args[i]
	}
	inner := &scope{vars: vars, funcs: sc.funcs, parent: rootScope(sc)}
	for _, l := range f.Lets {
		v, err := ev.eval(l.Expr, inner)
		if err != nil {
			return nil, err
		}
		vars[l.Name] = v
	}
	return ev.eval(f.Return, inner)
}

// rootScope is the scope functions see: the match's wildcards, not the caller's locals.
func rootScope(sc *scope) *scope {
	for sc.parent != nil {
		sc = sc.parent
	}
	return sc
}

func (ev *evaluator) read(after bool, args []Value) (map[string]Value, bool, error) {
	if len(args) != 1 {
		return nil, false, errorf("get() takes one path.")
	}
	p, ok := args[0].(Path)
	if !ok {
		return nil, false, unsupported("get", args[0])
	}
	if ev.docs == nil {
		return nil, false, errorf("Service call error. Function: [get], Argument: [%s].", p)
	}
	ev.reads++
	if ev.reads > ev.maxReads {
		return nil, false, errorf("Maximum number of document reads (%d) exceeded.", ev.maxReads)
	}
	if after {
		return ev.docs.GetAfter(string(p))
	}
	return ev.docs.Get(string(p))
}

func (ev *evaluator) global(name string, args []Value) (Value, error) {
	arg := func(i int) Value {
		if i < len(args) {
			return args[i]
		}
		return nil
	}
	switch name {
	case "get", "getAfter", "firestore.get", "firestore.getAfter":
		doc, ok, err := ev.read(strings.HasSuffix(name, "After"), args)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, nil
		}
		return doc, nil
	case "exists", "existsAfter", "firestore.exists", "firestore.existsAfter":
		_, ok, err := ev.read(strings.HasSuffix(name, "After"), args)
		return ok, err
	case "int":
		switch v := arg(0).(type) {
		case int64:
			return v, nil
		case float64:
			return int64(v), nil
		case string:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, errorf("Cannot convert %q to int.", v)
			}
			return n, nil
		}
	case "float":
		switch v := arg(0).(type) {
		case int64:
			return float64(v), nil
		case float64:
			return v, nil
		case string:
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, errorf("Cannot convert %q to float.", v)
			}
			return f, nil
		}
	case "string":
		return stringOf(arg(0)), nil
	case "path":
		if s, ok := arg(0).(string); ok {
			return Path(s), nil
		}
	case "math.abs":
		switch v := arg(0).(type) {
		case int64:
			if v < 0 {
				return -v, nil
			}
			return v, nil
		case float64:
			return math.Abs(v), nil
		}
	case "math.floor", "math.ceil", "math.round":
		if f, ok := number(arg(0)); ok {
			switch name {
			case "math.floor":
				return int64(math.Floor(f)), nil
			case "math.ceil":
				return int64(math.Ceil(f)), nil
			}
			return int64(math.Round(f)), nil
		}
	case "timestamp.value":
		if ms, ok := arg(0).(int64); ok {
			return time.UnixMilli(ms).UTC(), nil
		}
	case "duration.value":
		n, nok := arg(0).(int64)
		unit, uok := arg(1).(string)
		if nok && uok {
			units := map[string]time.Duration{"w": 7 * 24 * time.Hour, "d": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second, "ms": time.Millisecond, "ns": time.Nanosecond}
			if u, ok := units[unit]; ok {
				return time.Duration(n) * u, nil
			}
			return nil, errorf("Invalid duration unit %q.", unit)
		}
	default:
		return nil, errorf("Function not found error: Name: [%s].", name)
	}
	return nil, errorf("Unsupported operation error. Received: %s(%s).", name, argTypes(args))
}

func argTypes(args []Value) string {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = typeName(a)
	}
	return strings.Join(names, ", ")
}

// method calls a method of a value's type.
func method(recv Value, name string, args []Value) (Value, error) {
	list := func(i int) ([]Value, bool) {
		if i >= len(args) {
			return nil, false
		}
		switch l := args[i].(type) {
		case []Value:
			return l, true
		case Set:
			return []Value(l), true
		}
		return nil, false
	}
	str := func(i int) (string, bool) {
		if i >= len(args) {
			return "", false
		}
		s, ok := args[i].(string)
		return s, ok
	}
	switch r := recv.(type) {
	case nil:
		return nil, errNull
	case string:
		switch name {
		case "size":
			return int64(len([]rune(r))), nil
		case "lower":
			return strings.ToLower(r), nil
		case "upper":
			return strings.ToUpper(r), nil
		case "trim":
			return strings.TrimSpace(r), nil
		case "matches":
			if p, ok := str(0); ok {
				re, err := compileRegexp(p, true)
				if err != nil {
					return nil, err
				}
				return re.MatchString(r), nil
			}
		case "split":
			if p, ok := str(0); ok {
				re, err := compileRegexp(p, false)
				if err != nil {
					return nil, err
				}
				var out []Value
				for _, part := range re.Split(r, -1) {
					out = append(out, part)
				}
				return out, nil
			}
		case "replace":
			p, ok1 := str(0)
			sub, ok2 := str(1)
			if ok1 && ok2 {
				re, err := compileRegexp(p, false)
				if err != nil {
					return nil, err
				}
				return re.ReplaceAllString(r, sub), nil
			}
		case "toUtf8":
			return []byte(r), nil
		}
	case Set:
		other, ok := args0Set(args)
		switch name {
		case "size":
			return int64(len(r)), nil
		case "hasAll", "hasAny", "hasOnly":
			return method([]Value(r), name, args)
		case "difference", "union", "intersection":
			if !ok {
				break
			}
			var out []Value
			switch name {
			case "difference":
				for _, v := range r {
					if c, _ := contains(other, v); c != true {
						out = append(out, v)
					}
				}
			case "union":
				out = append(append(out, r...), other...)
			default:
				for _, v := range r {
					if c, _ := contains(other, v); c == true {
						out = append(out, v)
					}
				}
			}
			return toSet(out), nil
		}
	case []Value:
		switch name {
		case "size":
			return int64(len(r)), nil
		case "hasAll", "hasAny", "hasOnly":
			other, ok := list(0)
			if !ok {
				break
			}
			in := func(l []Value, v Value) bool { c, _ := contains(l, v); return c == true }
			switch name {
			case "hasAll":
				for _, v := range other {
					if !in(r, v) {
						return false, nil
					}
				}
				return true, nil
			case "hasAny":
				for _, v := range other {
					if in(r, v) {
						return true, nil
					}
				}
				return false, nil
			default:
				for _, v := range r {
					if !in(other, v) {
						return false, nil
					}
				}
				return true, nil
			}
		case "join":
			if sep, ok := str(0); ok {
				parts := make([]string, len(r))
				for i, v := range r {
					s, isStr := v.(string)
					if !isStr {
						return nil, unsupported("join", v)
					}
					parts[i] = s
				}
				return strings.Join(parts, sep), nil
			}
		case "concat":
			if other, ok := list(0); ok {
				return append(append([]Value{}, r...), other...), nil
			}
		case "removeAll":
			if other, ok := list(0); ok {
				var out []Value
				for _, v := range r {
					if c, _ := contains(other, v); c != true {
						out = append(out, v)
					}
				}
				return out, nil
			}
		case "toSet":
			return toSet(r), nil
		}
	case map[string]Value:
		switch name {
		case "size":
			return int64(len(r)), nil
		case "keys":
			return keys(r), nil
		case "values":
			out := []Value{}
			for _, k := range keys(r) {
				out = append(out, r[k.(string)])
			}
			return out, nil
		case "get":
			if len(args) != 2 {
				break
			}
			switch k := args[0].(type) {
			case string:
				if v, ok := r[k]; ok {
					return v, nil
				}
				return args[1], nil
			case []Value:
				var cur Value = r
				for _, part := range k {
					m, ok := cur.(map[string]Value)
					ks, isStr := part.(string)
					if !ok || !isStr {
						return args[1], nil
					}
					if cur, ok = m[ks]; !ok {
						return args[1], nil
					}
				}
				return cur, nil
			}
		case "diff":
			if len(args) == 1 {
				if other, ok := args[0].(map[string]Value); ok {
					return &MapDiff{A: r, B: other}, nil
				}
			}
		}
	case *MapDiff:
		var out []Value
		add := func(k string) { out = append(out, k) }
		for _, k := range keys(union(r.A, r.B)) {
			key := k.(string)
			av, inA := r.A[key]
			bv, inB := r.B[key]
			switch name {
			case "addedKeys":
				if inA && !inB {
					add(key)
				}
			case "removedKeys":
				if !inA && inB {
					add(key)
				}
			case "changedKeys":
				if inA && inB && !equal(av, bv) {
					add(key)
				}
			case "affectedKeys":
				if !inA || !inB || !equal(av, bv) {
					add(key)
				}
			case "unchangedKeys":
				if inA && inB && equal(av, bv) {
					add(key)
				}
			default:
				return nil, errorf("Function not found error: Name: [%s].", name)
			}
		}
		return toSet(out), nil
	case time.Time:
		switch name {
		case "toMillis":
			return r.UnixMilli(), nil
		case "seconds":
			return r.Unix(), nil
		case "year":
			return int64(r.Year()), nil
		case "date":
			y, m, d := r.Date()
			return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
		}
	case Path:
		if name == "bind" {
			return r, nil
		}
	}
	return nil, errorf("Unsupported operation error. Received: %s.%s(%s).", typeName(recv), name, argTypes(args))
}

func args0Set(args []Value) (Set, bool) {
	if len(args) != 1 {
		return nil, false
	}
	s, ok := args[0].(Set)
	return s, ok
}

func union(a, b map[string]Value) map[string]Value {
	out := map[string]Value{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
