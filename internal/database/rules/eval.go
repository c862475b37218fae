package rules

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf16"

	"github.com/loupe-dev/loupe/internal/database"
)

// snapshot is a location of a tree, as data, newData and root are.
type snapshot struct {
	root *database.Node
	path database.Path
}

func (s snapshot) node() *database.Node { return s.root.At(s.path) }

// method is a method value waiting for its call: recv.name(…).
type method struct {
	recv any
	name string
}

// vars are the variables in scope of one evaluation.
type vars map[string]any

var errNotBool = errors.New("the rule did not evaluate to a boolean")

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case snapshot:
		return "snapshot"
	case *regexp.Regexp:
		return "regular expression"
	case method:
		return "function"
	case []any:
		return "array"
	}
	return "object"
}

func eval(e expr, env vars) (any, error) {
	switch x := e.(type) {
	case litExpr:
		return x.v, nil
	case varExpr:
		v, ok := env[x.name]
		if !ok {
			return nil, fmt.Errorf("unknown variable %s", x.name)
		}
		return v, nil
	case listExpr:
		out := make([]any, len(x.items))
		for i, it := range x.items {
			v, err := eval(it, env)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case memberExpr:
		recv, err := eval(x.x, env)
		if err != nil {
			return nil, err
		}
		return member(recv, x.name)
	case indexExpr:
		recv, err := eval(x.x, env)
		if err != nil {
			return nil, err
		}
		idx, err := eval(x.idx, env)
		if err != nil {
			return nil, err
		}
		name, ok := idx.(string)
		if !ok {
			return nil, fmt.Errorf("an index must be a string, not a %s", typeName(idx))
		}
		if _, isMap := recv.(map[string]any); !isMap {
			return nil, fmt.Errorf("cannot index a %s", typeName(recv))
		}
		return member(recv, name)
	case callExpr:
		fn, err := eval(x.fn, env)
		if err != nil {
			return nil, err
		}
		m, ok := fn.(method)
		if !ok {
			return nil, fmt.Errorf("a %s is not a function", typeName(fn))
		}
		args := make([]any, len(x.args))
		for i, a := range x.args {
			if args[i], err = eval(a, env); err != nil {
				return nil, err
			}
		}
		return call(m, args)
	case unaryExpr:
		v, err := eval(x.x, env)
		if err != nil {
			return nil, err
		}
		if x.op == "!" {
			b, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("! needs a boolean, not a %s", typeName(v))
			}
			return !b, nil
		}
		f, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("- needs a number, not a %s", typeName(v))
		}
		return -f, nil
	case condExpr:
		c, err := eval(x.cond, env)
		if err != nil {
			return nil, err
		}
		b, ok := c.(bool)
		if !ok {
			return nil, fmt.Errorf("?: needs a boolean condition, not a %s", typeName(c))
		}
		if b {
			return eval(x.yes, env)
		}
		return eval(x.no, env)
	case binaryExpr:
		return binary(x, env)
	}
	return nil, fmt.Errorf("unknown expression")
}

func binary(x binaryExpr, env vars) (any, error) {
	l, err := eval(x.l, env)
	if err != nil {
		return nil, err
	}
	if x.op == "&&" || x.op == "||" {
		lb, ok := l.(bool)
		if !ok {
			return nil, fmt.Errorf("%s needs booleans, not a %s", x.op, typeName(l))
		}
		if (x.op == "&&" && !lb) || (x.op == "||" && lb) {
			return lb, nil
		}
		r, err := eval(x.r, env)
		if err != nil {
			return nil, err
		}
		rb, ok := r.(bool)
		if !ok {
			return nil, fmt.Errorf("%s needs booleans, not a %s", x.op, typeName(r))
		}
		return rb, nil
	}
	r, err := eval(x.r, env)
	if err != nil {
		return nil, err
	}
	switch x.op {
	case "==", "===", "!=", "!==":
		eq, err := equal(l, r)
		if err != nil {
			return nil, err
		}
		return eq == (x.op == "==" || x.op == "==="), nil
	case "<", "<=", ">", ">=":
		c, err := compare(l, r)
		if err != nil {
			return nil, err
		}
		return map[string]bool{"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[x.op], nil
	case "+":
		if ls, ok := l.(string); ok {
			return ls + display(r), nil
		}
		if rs, ok := r.(string); ok {
			return display(l) + rs, nil
		}
	}
	lf, lok := l.(float64)
	rf, rok := r.(float64)
	if !lok || !rok {
		return nil, fmt.Errorf("%s needs numbers, not a %s and a %s", x.op, typeName(l), typeName(r))
	}
	switch x.op {
	case "+":
		return lf + rf, nil
	case "-":
		return lf - rf, nil
	case "*":
		return lf * rf, nil
	case "/":
		return lf / rf, nil
	}
	if rf == 0 {
		return nil, errors.New("% by zero")
	}
	return lf - rf*float64(int64(lf/rf)), nil
}

// display is a value as + joins it to a string.
func display(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case float64:
		return string(database.AppendNumber(nil, v))
	}
	return fmt.Sprint(v)
}

func equal(l, r any) (bool, error) {
	if l == nil || r == nil { // auth != null, and any value against null
		return l == nil && r == nil, nil
	}
	switch l.(type) {
	case snapshot, method, map[string]any, []any:
		return false, fmt.Errorf("cannot compare a %s", typeName(l))
	}
	switch r.(type) {
	case snapshot, method, map[string]any, []any:
		return false, fmt.Errorf("cannot compare a %s", typeName(r))
	}
	return l == r, nil
}

func compare(l, r any) (int, error) {
	switch lv := l.(type) {
	case float64:
		if rv, ok := r.(float64); ok {
			switch {
			case lv < rv:
				return -1, nil
			case lv > rv:
				return 1, nil
			}
			return 0, nil
		}
	case string:
		if rv, ok := r.(string); ok {
			return strings.Compare(lv, rv), nil
		}
	}
	return 0, fmt.Errorf("cannot order a %s and a %s", typeName(l), typeName(r))
}

var snapshotMethods = map[string]bool{"val": true, "child": true, "parent": true, "hasChild": true, "hasChildren": true,
	"exists": true, "getPriority": true, "isNumber": true, "isString": true, "isBoolean": true}

var stringMethods = map[string]bool{"contains": true, "beginsWith": true, "endsWith": true, "replace": true,
	"toLowerCase": true, "toUpperCase": true, "matches": true}

func member(recv any, name string) (any, error) {
	switch r := recv.(type) {
	case snapshot:
		if snapshotMethods[name] {
			return method{r, name}, nil
		}
		return nil, fmt.Errorf("no such method or property '%s' of a snapshot", name)
	case string:
		if name == "length" {
			return float64(len(utf16.Encode([]rune(r)))), nil
		}
		if stringMethods[name] {
			return method{r, name}, nil
		}
		return nil, fmt.Errorf("no such method or property '%s' of a string", name)
	case map[string]any:
		return r[name], nil
	case nil:
		return nil, fmt.Errorf("cannot read '%s' of null", name)
	}
	return nil, fmt.Errorf("no such property '%s' of a %s", name, typeName(recv))
}

func argStrings(name string, args []any, n int) ([]string, error) {
	if len(args) != n {
		return nil, fmt.Errorf("%s takes %d argument(s)", name, n)
	}
	out := make([]string, n)
	for i, a := range args {
		s, ok := a.(string)
		if !ok {
			return nil, fmt.Errorf("%s needs a string argument, not a %s", name, typeName(a))
		}
		out[i] = s
	}
	return out, nil
}

func call(m method, args []any) (any, error) {
	if s, ok := m.recv.(string); ok {
		return callString(s, m.name, args)
	}
	snap := m.recv.(snapshot)
	n := snap.node()
	switch m.name {
	case "val":
		return n.Value(), nil
	case "exists":
		return !n.IsEmpty(), nil
	case "getPriority":
		if p := n.Priority(); p != nil {
			return p.Value(), nil
		}
		return nil, nil
	case "isNumber":
		return n.Kind() == database.Number, nil
	case "isString":
		return n.Kind() == database.String, nil
	case "isBoolean":
		return n.Kind() == database.Bool, nil
	case "parent":
		if len(snap.path) == 0 {
			return nil, errors.New("the root has no parent")
		}
		return snapshot{snap.root, snap.path.Parent()}, nil
	case "child", "hasChild":
		a, err := argStrings(m.name, args, 1)
		if err != nil {
			return nil, err
		}
		rel, err := database.ParsePath(a[0])
		if err != nil {
			return nil, err
		}
		child := snapshot{snap.root, snap.path.Child(rel...)}
		if m.name == "child" {
			return child, nil
		}
		return !child.node().IsEmpty(), nil
	case "hasChildren":
		if len(args) == 0 {
			return n.Kind() == database.Object, nil
		}
		list, ok := args[0].([]any)
		if len(args) != 1 || !ok {
			return nil, errors.New("hasChildren takes a list of child names")
		}
		for _, k := range list {
			name, ok := k.(string)
			if !ok {
				return nil, errors.New("hasChildren takes a list of strings")
			}
			rel, err := database.ParsePath(name)
			if err != nil {
				return nil, err
			}
			if n.At(rel).IsEmpty() {
				return false, nil
			}
		}
		return true, nil
	}
	return nil, fmt.Errorf("no such method %s", m.name)
}

func callString(s, name string, args []any) (any, error) {
	switch name {
	case "toLowerCase", "toUpperCase":
		if len(args) != 0 {
			return nil, fmt.Errorf("%s takes no arguments", name)
		}
		if name == "toLowerCase" {
			return strings.ToLower(s), nil
		}
		return strings.ToUpper(s), nil
	case "matches":
		if len(args) != 1 {
			return nil, errors.New("matches takes a regular expression")
		}
		re, ok := args[0].(*regexp.Regexp)
		if !ok {
			return nil, fmt.Errorf("matches needs a regular expression, not a %s", typeName(args[0]))
		}
		return re.MatchString(s), nil
	case "replace":
		a, err := argStrings(name, args, 2)
		if err != nil {
			return nil, err
		}
		return strings.ReplaceAll(s, a[0], a[1]), nil
	}
	a, err := argStrings(name, args, 1)
	if err != nil {
		return nil, err
	}
	switch name {
	case "contains":
		return strings.Contains(s, a[0]), nil
	case "beginsWith":
		return strings.HasPrefix(s, a[0]), nil
	}
	return strings.HasSuffix(s, a[0]), nil
}
