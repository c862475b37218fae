package rules

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

var namespaces = map[string]bool{"math": true, "timestamp": true, "duration": true, "hashing": true, "latlng": true, "firestore": true}

func (e *env) evalArgs(ns []node) ([]any, error) {
	args := make([]any, len(ns))
	for i, n := range ns {
		v, err := e.eval(n)
		if err != nil {
			return nil, err
		}
		args[i] = norm(v)
	}
	return args, nil
}

func (e *env) call(n *callNode) (any, error) {
	if n.recv == nil {
		args, err := e.evalArgs(n.args)
		if err != nil {
			return nil, err
		}
		if f := e.scope.lookup(n.name); f != nil {
			return e.callFunc(f, args)
		}
		return e.global(n.name, args)
	}
	if id, ok := n.recv.(*identNode); ok && namespaces[id.name] {
		_, local := e.locals[id.name]
		_, bound := e.bindings[id.name]
		if !local && !bound {
			args, err := e.evalArgs(n.args)
			if err != nil {
				return nil, err
			}
			return e.namespaced(id.name, n.name, args)
		}
	}
	recv, err := e.eval(n.recv)
	if err != nil {
		return nil, err
	}
	args, err := e.evalArgs(n.args)
	if err != nil {
		return nil, err
	}
	return method(norm(recv), n.name, args)
}

func argErr(name string, args []any) error {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = typeName(a)
	}
	return errf("Unsupported operation error. Received: %s(%s).", name, strings.Join(ts, ","))
}

func (e *env) global(name string, args []any) (any, error) {
	switch name {
	case "get", "exists", "getAfter", "existsAfter":
		if e.ev.req.Service != Firestore || len(args) != 1 {
			return nil, errNoFunc(name)
		}
		return e.ev.document(name, args[0])
	case "debug":
		if len(args) == 1 {
			return args[0], nil
		}
	case "string":
		if len(args) == 1 {
			return toString(args[0])
		}
	case "int":
		if len(args) == 1 {
			switch x := args[0].(type) {
			case int64:
				return x, nil
			case float64:
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return nil, argErr(name, args)
				}
				return int64(x), nil
			case string:
				v, err := strconv.ParseInt(x, 10, 64)
				if err != nil {
					return nil, errf("Unable to parse int from %q.", x)
				}
				return v, nil
			}
		}
	case "float":
		if len(args) == 1 {
			switch x := args[0].(type) {
			case int64:
				return float64(x), nil
			case float64:
				return x, nil
			case string:
				v, err := strconv.ParseFloat(x, 64)
				if err != nil {
					return nil, errf("Unable to parse float from %q.", x)
				}
				return v, nil
			}
		}
	case "bool":
		if len(args) == 1 {
			switch x := args[0].(type) {
			case bool:
				return x, nil
			case string:
				switch x {
				case "true":
					return true, nil
				case "false":
					return false, nil
				}
				return nil, errf("Unable to parse bool from %q.", x)
			}
		}
	case "path":
		if len(args) == 1 {
			if s, ok := args[0].(string); ok {
				return parsePath(s), nil
			}
			return nil, errf("Unsupported operation error. Received: path(%s). Expected: path(string).", typeName(args[0]))
		}
	default:
		return nil, errNoFunc(name)
	}
	return nil, argErr(name, args)
}

func parsePath(s string) Path {
	var p Path
	for _, seg := range strings.Split(s, "/") {
		if seg != "" {
			p = append(p, seg)
		}
	}
	return p
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func ints(args []any, n int) ([]int64, bool) {
	if len(args) != n {
		return nil, false
	}
	out := make([]int64, n)
	for i, a := range args {
		v, ok := a.(int64)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

func bytesOf(v any) ([]byte, bool) {
	switch x := v.(type) {
	case string:
		return []byte(x), true
	case []byte:
		return x, true
	}
	return nil, false
}

var durationUnits = map[string]time.Duration{"w": 7 * 24 * time.Hour, "d": 24 * time.Hour, "h": time.Hour,
	"m": time.Minute, "s": time.Second, "ms": time.Millisecond, "ns": time.Nanosecond}

func (e *env) namespaced(ns, name string, args []any) (any, error) {
	full := ns + "." + name
	switch full {
	case "firestore.get", "firestore.exists":
		if len(args) == 1 {
			return e.ev.document(name, args[0])
		}
	case "math.abs":
		if len(args) == 1 {
			switch x := args[0].(type) {
			case int64:
				if x < 0 {
					return -x, nil
				}
				return x, nil
			case float64:
				return math.Abs(x), nil
			}
		}
	case "math.ceil", "math.floor", "math.round", "math.sqrt", "math.isNaN", "math.isInfinite":
		if len(args) == 1 {
			if f, ok := num(args[0]); ok {
				switch name {
				case "ceil":
					return int64(math.Ceil(f)), nil
				case "floor":
					return int64(math.Floor(f)), nil
				case "round":
					return int64(math.Floor(f + 0.5)), nil
				case "sqrt":
					return math.Sqrt(f), nil
				case "isNaN":
					return math.IsNaN(f), nil
				}
				return math.IsInf(f, 0), nil
			}
		}
	case "math.pow":
		if len(args) == 2 {
			b, ok1 := num(args[0])
			x, ok2 := num(args[1])
			if ok1 && ok2 {
				return math.Pow(b, x), nil
			}
		}
	case "timestamp.date":
		if v, ok := ints(args, 3); ok {
			return time.Date(int(v[0]), time.Month(v[1]), int(v[2]), 0, 0, 0, 0, time.UTC), nil
		}
	case "timestamp.value":
		if v, ok := ints(args, 1); ok {
			return time.UnixMilli(v[0]).UTC(), nil
		}
	case "duration.value":
		if len(args) == 2 {
			n, ok1 := args[0].(int64)
			u, ok2 := args[1].(string)
			if d, known := durationUnits[u]; ok1 && ok2 && known {
				return time.Duration(n) * d, nil
			}
			if ok1 && ok2 {
				return nil, errf("Invalid duration unit %q.", u)
			}
		}
	case "duration.time":
		if v, ok := ints(args, 4); ok {
			return time.Duration(v[0])*time.Hour + time.Duration(v[1])*time.Minute + time.Duration(v[2])*time.Second + time.Duration(v[3]), nil
		}
	case "duration.abs":
		if d, ok := oneArg[time.Duration](args); ok {
			if d < 0 {
				d = -d
			}
			return d, nil
		}
	case "latlng.value":
		if len(args) == 2 {
			lat, ok1 := num(args[0])
			lng, ok2 := num(args[1])
			if ok1 && ok2 {
				if lat < -90 || lat > 90 || lng < -180 || lng > 180 {
					return nil, errf("Latitude should be in [-90,90] range and longitude should be in [-180,180] range. latitude: %s, longitude: %s.", javaDouble(lat), javaDouble(lng))
				}
				return LatLng{lat, lng}, nil
			}
		}
	case "hashing.md5", "hashing.sha256", "hashing.crc32", "hashing.crc32c":
		if len(args) == 1 {
			if b, ok := bytesOf(args[0]); ok {
				switch name {
				case "md5":
					s := md5.Sum(b)
					return s[:], nil
				case "sha256":
					s := sha256.Sum256(b)
					return s[:], nil
				case "crc32":
					return binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(b)), nil
				}
				return binary.LittleEndian.AppendUint32(nil, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))), nil
			}
		}
	default:
		return nil, errNoFunc(full)
	}
	return nil, argErr(full, args)
}

func oneArg[T any](args []any) (T, bool) {
	var zero T
	if len(args) != 1 {
		return zero, false
	}
	v, ok := args[0].(T)
	return v, ok
}

var regexCache sync.Map

func compileRegex(re string) (*regexp.Regexp, error) {
	if r, ok := regexCache.Load(re); ok {
		return r.(*regexp.Regexp), nil
	}
	r, err := regexp.Compile(re)
	if err != nil {
		return nil, errf("Invalid regular expression %q.", re)
	}
	regexCache.Store(re, r)
	return r, nil
}

// method dispatches a method call on a value of any kind.
func method(recv any, name string, args []any) (any, error) {
	if recv == nil {
		return nil, errNull
	}
	var v any
	var err error
	handled := true
	switch x := recv.(type) {
	case string:
		v, err, handled = stringMethod(x, name, args)
	case []any:
		v, err, handled = listMethod(x, name, args)
	case *Set:
		v, err, handled = setMethod(x, name, args)
	case *containsList:
		if name == "hasAny" {
			if l, ok := oneList(args); ok {
				for _, a := range l {
					if contains(x.v, a) {
						return true, nil
					}
				}
			}
		}
		return nil, errf("Unknown list contents in a query.")
	case map[string]any:
		v, err, handled = mapMethod(x, name, args)
	case *mapDiff:
		v, err, handled = diffMethod(x, name, args)
	case []byte:
		v, err, handled = bytesMethod(x, name, args)
	case time.Time:
		v, err, handled = timeMethod(x, name, args)
	case time.Duration:
		handled = len(args) == 0 && (name == "seconds" || name == "nanos")
		if name == "seconds" {
			v = int64(x / time.Second)
		} else {
			v = int64(x % time.Second)
		}
	case LatLng:
		v, err, handled = latlngMethod(x, name, args)
	case Path:
		if name == "bind" {
			if m, ok := oneArg[map[string]any](args); ok {
				out := make(Path, len(x))
				for i, seg := range x {
					out[i] = seg
					if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
						if b, ok := m[seg[1:len(seg)-1]]; ok {
							s, err := toString(norm(b))
							if err != nil {
								return nil, err
							}
							out[i] = s
						}
					}
				}
				return out, nil
			}
			return nil, argErr("path.bind", args)
		}
		handled = false
	default:
		handled = false
	}
	if !handled {
		return nil, errNoFunc(name)
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

func oneList(args []any) ([]any, bool) {
	if len(args) != 1 {
		return nil, false
	}
	return asList(args[0])
}

func stringMethod(s, name string, args []any) (any, error, bool) {
	bad := func() (any, error, bool) { return nil, argErr("string."+name, args), true }
	strArg := func(i int) (string, bool) {
		if i >= len(args) {
			return "", false
		}
		v, ok := args[i].(string)
		return v, ok
	}
	switch name {
	case "size":
		return int64(len([]rune(s))), nil, true
	case "lower":
		return strings.ToLower(s), nil, true
	case "upper":
		return strings.ToUpper(s), nil, true
	case "trim":
		return strings.TrimSpace(s), nil, true
	case "toUtf8":
		return []byte(s), nil, true
	case "matches", "split":
		re, ok := strArg(0)
		if !ok || len(args) != 1 {
			return bad()
		}
		if name == "matches" {
			whole, err := compileRegex("^(?:" + re + ")$")
			if err != nil {
				return nil, err, true
			}
			return whole.MatchString(s), nil, true
		}
		r, err := compileRegex(re)
		if err != nil {
			return nil, err, true
		}
		parts := r.Split(s, -1)
		out := make([]any, len(parts))
		for i, p := range parts {
			out[i] = p
		}
		return out, nil, true
	case "replace":
		re, ok1 := strArg(0)
		sub, ok2 := strArg(1)
		if !ok1 || !ok2 || len(args) != 2 {
			return bad()
		}
		r, err := compileRegex(re)
		if err != nil {
			return nil, err, true
		}
		return r.ReplaceAllLiteralString(s, sub), nil, true
	}
	return nil, nil, false
}

func listMethod(l []any, name string, args []any) (any, error, bool) {
	switch name {
	case "size":
		return int64(len(l)), nil, true
	case "toSet":
		return toSet(l), nil, true
	case "join":
		sep, ok := oneArg[string](args)
		if !ok {
			return nil, argErr("list.join", args), true
		}
		parts := make([]string, len(l))
		for i, v := range l {
			s, ok := v.(string)
			if !ok {
				return nil, errf("Unsupported operation error. Received: list.join on %s element.", typeName(v)), true
			}
			parts[i] = s
		}
		return strings.Join(parts, sep), nil, true
	case "concat", "removeAll", "hasAll", "hasAny", "hasOnly":
		m, ok := oneList(args)
		if !ok {
			return nil, argErr("list."+name, args), true
		}
		switch name {
		case "concat":
			return append(append([]any(nil), l...), m...), nil, true
		case "removeAll":
			var out []any
			for _, v := range l {
				if !contains(m, v) {
					out = append(out, v)
				}
			}
			if out == nil {
				out = []any{}
			}
			return out, nil, true
		}
		return collectionTest(l, m, name), nil, true
	}
	return nil, nil, false
}

func collectionTest(l, m []any, name string) bool {
	switch name {
	case "hasAll":
		return containsAll(l, m)
	case "hasAny":
		for _, v := range m {
			if contains(l, v) {
				return true
			}
		}
		return false
	}
	return containsAll(m, l)
}

func setMethod(s *Set, name string, args []any) (any, error, bool) {
	switch name {
	case "size":
		return int64(len(s.items)), nil, true
	case "hasAll", "hasAny", "hasOnly":
		m, ok := oneList(args)
		if !ok {
			return nil, argErr("set."+name, args), true
		}
		return collectionTest(s.items, m, name), nil, true
	case "union", "intersection", "difference":
		o, ok := oneArg[*Set](args)
		if !ok {
			return nil, argErr("set."+name, args), true
		}
		var out []any
		switch name {
		case "union":
			out = append(append(out, s.items...), o.items...)
		default:
			for _, v := range s.items {
				if contains(o.items, v) == (name == "intersection") {
					out = append(out, v)
				}
			}
		}
		return toSet(out), nil, true
	}
	return nil, nil, false
}

func mapMethod(m map[string]any, name string, args []any) (any, error, bool) {
	switch name {
	case "size":
		return int64(len(m)), nil, true
	case "keys", "values":
		ks := sortedKeys(m)
		out := make([]any, len(ks))
		for i, k := range ks {
			if name == "keys" {
				out[i] = k
			} else {
				out[i] = norm(m[k])
			}
		}
		return out, nil, true
	case "diff":
		o, ok := oneArg[map[string]any](args)
		if !ok {
			if len(args) == 1 && args[0] == nil {
				return nil, errNull, true
			}
			return nil, argErr("map.diff", args), true
		}
		return &mapDiff{a: m, b: o}, nil, true
	case "get":
		if len(args) != 2 {
			return nil, argErr("map.get", args), true
		}
		var keys []any
		switch k := args[0].(type) {
		case string:
			keys = []any{k}
		case []any:
			keys = k
		default:
			return nil, argErr("map.get", args), true
		}
		var cur any = m
		for _, k := range keys {
			cm, ok1 := cur.(map[string]any)
			ks, ok2 := k.(string)
			if !ok1 || !ok2 {
				return args[1], nil, true
			}
			next, ok := cm[ks]
			if !ok {
				return args[1], nil, true
			}
			cur = norm(next)
		}
		return cur, nil, true
	}
	return nil, nil, false
}

func diffMethod(d *mapDiff, name string, args []any) (any, error, bool) {
	if len(args) != 0 {
		return nil, nil, false
	}
	var keys []any
	add := func(k string) { keys = append(keys, k) }
	switch name {
	case "addedKeys", "removedKeys", "changedKeys", "unchangedKeys", "affectedKeys":
	default:
		return nil, nil, false
	}
	for _, k := range sortedKeys(d.a) {
		bv, inB := d.b[k]
		switch {
		case !inB:
			if name == "addedKeys" || name == "affectedKeys" {
				add(k)
			}
		case equal(d.a[k], bv):
			if name == "unchangedKeys" {
				add(k)
			}
		default:
			if name == "changedKeys" || name == "affectedKeys" {
				add(k)
			}
		}
	}
	if name == "removedKeys" || name == "affectedKeys" {
		for _, k := range sortedKeys(d.b) {
			if _, inA := d.a[k]; !inA {
				add(k)
			}
		}
	}
	return &Set{items: keys}, nil, true
}

func bytesMethod(b []byte, name string, args []any) (any, error, bool) {
	if len(args) != 0 {
		return nil, nil, false
	}
	switch name {
	case "size":
		return int64(len(b)), nil, true
	case "toBase64":
		return base64.URLEncoding.EncodeToString(b), nil, true
	case "toHexString":
		return strings.ToUpper(hex.EncodeToString(b)), nil, true
	}
	return nil, nil, false
}

func timeMethod(t time.Time, name string, args []any) (any, error, bool) {
	if len(args) != 0 {
		return nil, nil, false
	}
	t = t.UTC()
	switch name {
	case "year":
		return int64(t.Year()), nil, true
	case "month":
		return int64(t.Month()), nil, true
	case "day":
		return int64(t.Day()), nil, true
	case "hours":
		return int64(t.Hour()), nil, true
	case "minutes":
		return int64(t.Minute()), nil, true
	case "seconds":
		return int64(t.Second()), nil, true
	case "nanos":
		return int64(t.Nanosecond()), nil, true
	case "dayOfWeek":
		return int64((int(t.Weekday())+6)%7 + 1), nil, true
	case "dayOfYear":
		return int64(t.YearDay()), nil, true
	case "date":
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil, true
	case "time":
		return t.Sub(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)), nil, true
	case "toMillis":
		return t.UnixMilli(), nil, true
	}
	return nil, nil, false
}

const earthRadius = 6371008.8

func latlngMethod(l LatLng, name string, args []any) (any, error, bool) {
	switch name {
	case "latitude":
		return l.Lat, nil, len(args) == 0
	case "longitude":
		return l.Lng, nil, len(args) == 0
	case "distance":
		o, ok := oneArg[LatLng](args)
		if !ok {
			return nil, argErr("latlng.distance", args), true
		}
		rad := math.Pi / 180
		dLat, dLng := (o.Lat-l.Lat)*rad, (o.Lng-l.Lng)*rad
		a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(l.Lat*rad)*math.Cos(o.Lat*rad)*math.Sin(dLng/2)*math.Sin(dLng/2)
		return 2 * earthRadius * math.Asin(math.Sqrt(a)), nil, true
	}
	return nil, nil, false
}
