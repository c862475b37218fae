package rules

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Path is a rules path value: its segments, without the leading slash.
type Path []string

// String renders the path with a leading slash.
func (p Path) String() string { return "/" + strings.Join(p, "/") }

// LatLng is a geographic point (Firestore geopoint).
type LatLng struct{ Lat, Lng float64 }

// Set is an unordered collection of unique values built by list.toSet().
type Set struct{ items []any }

// mapDiff is the result of map.diff(other).
type mapDiff struct{ a, b map[string]any }

// containsList stands for a list field that a list query pins with array-contains.
type containsList struct{ v []any }

// evalError is a rules evaluation error; its text matches the emulator's.
type evalError struct{ msg string }

func (e *evalError) Error() string { return e.msg }

func errf(format string, args ...any) error { return &evalError{fmt.Sprintf(format, args...)} }

var (
	errNull       = &evalError{"Null value error."}
	errDivZero    = &evalError{"Divide by zero error."}
	errBudget     = &evalError{"Exceeded maximum number of document reads."}
	errUnknownVar = &evalError{"Unknown value: the variable is not known for this request."}
)

func errUndefined(name string) error { return errf("Property %s is undefined on object.", name) }
func errNoFunc(name string) error    { return errf("Function not found error: Name: [%s].", name) }

// norm converts Go values supplied by callers to the evaluator's canonical kinds.
func norm(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	case []string:
		l := make([]any, len(x))
		for i, s := range x {
			l[i] = s
		}
		return l
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return m
	}
	return v
}

// typeName is the rules type of a value, as used in error messages and by "is".
func typeName(v any) string {
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
	case []any, *containsList:
		return "list"
	case map[string]any:
		return "map"
	case *Set:
		return "set"
	case *mapDiff:
		return "map_diff"
	case *constraint:
		return "constraint"
	case time.Time:
		return "timestamp"
	case time.Duration:
		return "duration"
	case Path:
		return "path"
	case LatLng:
		return "latlng"
	}
	return fmt.Sprintf("%T", v)
}

func isType(v any, t string) bool {
	n := typeName(v)
	return n == t || (t == "number" && (n == "int" || n == "float"))
}

func equal(a, b any) bool {
	a, b = norm(a), norm(b)
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return x == y
		case float64:
			return float64(x) == y
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return x == float64(y)
		case float64:
			return x == y
		}
	case []byte:
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
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
	case *Set:
		y, ok := b.(*Set)
		return ok && len(x.items) == len(y.items) && containsAll(x.items, y.items)
	case Path:
		y, ok := b.(Path)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case *mapDiff, *containsList:
		return false
	}
	return a == b
}

func contains(l []any, v any) bool {
	for _, x := range l {
		if equal(x, v) {
			return true
		}
	}
	return false
}

func containsAll(l, of []any) bool {
	for _, v := range of {
		if !contains(l, v) {
			return false
		}
	}
	return true
}

func compare(a, b any) (int, error) {
	if a == nil || b == nil {
		return 0, errNull
	}
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y), nil
		case float64:
			return cmpFloat(float64(x), y), nil
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return cmpFloat(x, float64(y)), nil
		case float64:
			return cmpFloat(x, y), nil
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return strings.Compare(string(x), string(y)), nil
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y), nil
		}
	case time.Duration:
		if y, ok := b.(time.Duration); ok {
			return cmp.Compare(x, y), nil
		}
	}
	return 0, errUnsupported(typeName(a), "compare", typeName(b))
}

// cmpFloat compares numbers as the rules language does: NaN compares
// equal to everything, so NaN < x and NaN > x are both false.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func errUnsupported(recv, op string, args ...string) error {
	return errf("Unsupported operation error. Received: %s.%s(%s).", recv, op, strings.Join(args, ","))
}

// toString renders a value for string() and path interpolation.
func toString(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "null", nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return javaDouble(x), nil
	case Path:
		return strings.Join(x, "/"), nil
	}
	return "", errUnsupported("string", "string", typeName(v))
}

// javaDouble formats like Java's Double.toString, which the reference emulator uses.
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-3 || a >= 1e7) {
		s := strconv.FormatFloat(f, 'E', -1, 64)
		mant, exp, _ := strings.Cut(s, "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		e, _ := strconv.Atoi(exp)
		return mant + "E" + strconv.Itoa(e)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func asList(v any) ([]any, bool) {
	switch x := norm(v).(type) {
	case []any:
		return x, true
	case *Set:
		return x.items, true
	}
	return nil, false
}

func toSet(l []any) *Set {
	s := &Set{}
	for _, v := range l {
		if !contains(s.items, v) {
			s.items = append(s.items, v)
		}
	}
	return s
}
