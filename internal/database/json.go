package database

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/loupe-dev/loupe/internal/errs"
)

// ServerValues resolves the placeholders a write may carry:
// {".sv": "timestamp"} becomes Now (milliseconds since the epoch), and
// {".sv": {"increment": n}} the number already at that location plus n (n
// when there is no number there).
type ServerValues struct {
	Now int64
}

// errInvalidData is the Realtime Database's answer to a body it cannot read.
var errInvalidData = errs.New(errs.InvalidArgument, "Invalid data; couldn't parse JSON object, array, or value.")

// ParseJSON reads a JSON value (as a REST body or a wire message carries
// it) into a node; text that is not UTF-8 is refused, as production's
// parser refuses it. existing is the data at the location now, for
// increments; sv resolves server values (nil leaves them an error).
func ParseJSON(data []byte, existing *Node, sv *ServerValues) (*Node, error) {
	if !utf8.Valid(data) {
		return nil, errInvalidData
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errInvalidData
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errInvalidData
	}
	return FromValue(v, existing, sv)
}

// FromValue builds a node from a decoded JSON value (json.Number or float64
// numbers, maps, slices, or a *Node), resolving server values against
// existing.
func FromValue(v any, existing *Node, sv *ServerValues) (*Node, error) {
	return fromValue(v, orEmpty(existing), sv, 0)
}

// fromValueAt is FromValue for data written at p: the path's keys count
// towards the depth limit with the data's.
func fromValueAt(v any, p Path, existing *Node, sv *ServerValues) (*Node, error) {
	return fromValue(v, orEmpty(existing), sv, len(p))
}

// errServerValueHere is FromValue's answer to a server value when it has
// none to resolve them with.
var errServerValueHere = errs.New(errs.InvalidArgument, "Invalid data; server values are not allowed here")

func fromValue(v any, existing *Node, sv *ServerValues, depth int) (*Node, error) {
	if depth > maxPathDepth {
		return nil, errs.Errorf(errs.InvalidArgument, "Invalid data; data is more than %d levels deep", maxPathDepth)
	}
	switch v := v.(type) {
	case nil:
		return Empty, nil
	case *Node:
		return orEmpty(v), nil
	case bool:
		return NewBool(v), nil
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, errInvalidData
		}
		return NewNumber(f), nil
	case float64:
		return NewNumber(v), nil
	case int:
		return NewNumber(float64(v)), nil
	case int64:
		return NewNumber(float64(v)), nil
	case string:
		if len(v) > maxLeafBytes {
			return nil, errs.Errorf(errs.InvalidArgument, "Invalid data; a string is longer than %d bytes", maxLeafBytes)
		}
		if !utf8.ValidString(v) {
			return nil, errInvalidData
		}
		return NewString(v), nil
	case []any:
		m := make(map[string]any, len(v))
		for i, x := range v {
			if x != nil {
				m[strconv.Itoa(i)] = x
			}
		}
		return fromValue(m, existing, sv, depth)
	case map[string]any:
		return fromObject(v, existing, sv, depth)
	}
	return nil, errInvalidData
}

func fromObject(m map[string]any, existing *Node, sv *ServerValues, depth int) (*Node, error) {
	if s, ok := m[".sv"]; ok {
		if len(m) != 1 {
			return nil, errs.New(errs.InvalidArgument, "Invalid data; .sv must be the only key of its object")
		}
		return serverValue(s, existing, sv)
	}
	var prio *Node
	if p, ok := m[".priority"]; ok {
		n, err := fromValue(p, existing.Child(".priority"), sv, depth+1)
		if err != nil {
			return nil, err
		}
		if !n.IsEmpty() && n.kind != Number && n.kind != String {
			return nil, errs.New(errs.InvalidArgument, "Invalid data; .priority must be a string, a number or null")
		}
		if !n.IsEmpty() {
			prio = n
		}
	}
	if val, ok := m[".value"]; ok {
		for k := range m {
			if k != ".value" && k != ".priority" {
				return nil, errs.New(errs.InvalidArgument, "Invalid data; .value must not sit beside other keys than .priority")
			}
		}
		n, err := fromValue(val, existing, sv, depth)
		if err != nil {
			return nil, err
		}
		if n.kind == Object {
			return nil, errs.New(errs.InvalidArgument, "Invalid data; .value must be a leaf")
		}
		return n.WithPriority(prio), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if k == ".priority" {
			continue
		}
		if err := checkKey(k); err != nil {
			return nil, errs.Errorf(errs.InvalidArgument, "Invalid data; %v", err)
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, CompareKeys)
	out := make([]string, 0, len(keys))
	nodes := make([]*Node, 0, len(keys))
	for _, k := range keys {
		n, err := fromValue(m[k], existing.Child(k), sv, depth+1)
		if err != nil {
			return nil, err
		}
		if n.IsEmpty() {
			continue
		}
		out = append(out, k)
		nodes = append(nodes, n)
	}
	return objectOf(out, nodes, prio), nil
}

func serverValue(s any, existing *Node, sv *ServerValues) (*Node, error) {
	if sv == nil {
		return nil, errServerValueHere
	}
	switch s := s.(type) {
	case string:
		if s == "timestamp" {
			return NewNumber(float64(sv.Now)), nil
		}
	case map[string]any:
		if inc, ok := s["increment"]; ok && len(s) == 1 {
			delta, err := fromValue(inc, Empty, nil, 0)
			if err != nil || delta.kind != Number {
				return nil, errs.New(errs.InvalidArgument, "Invalid data; increment must be a number")
			}
			if existing.kind == Number {
				return NewNumber(existing.num + delta.num), nil
			}
			return delta, nil
		}
	}
	return nil, errs.New(errs.InvalidArgument, "Invalid data; unknown server value")
}

// JSON is the node's JSON as REST answers it: no priorities, and objects
// whose keys are all small integers as arrays (as the SDKs' val() does).
func (n *Node) JSON() []byte { return n.AppendJSON(nil, false) }

// ExportJSON is the node's JSON with priorities (".priority", and
// {".value", ".priority"} for leaves): what the wire protocol and
// format=export carry.
func (n *Node) ExportJSON() []byte { return n.AppendJSON(nil, true) }

// AppendJSON appends the node's JSON to b.
func (n *Node) AppendJSON(b []byte, export bool) []byte {
	switch n.kind {
	case Null:
		return append(b, "null"...)
	case Object:
		return n.appendObject(b, export)
	}
	if export && n.prio != nil {
		b = append(b, `{".value":`...)
		b = appendLeaf(b, n)
		b = append(b, `,".priority":`...)
		b = appendLeaf(b, n.prio)
		return append(b, '}')
	}
	return appendLeaf(b, n)
}

func appendLeaf(b []byte, n *Node) []byte {
	switch n.kind {
	case Bool:
		return strconv.AppendBool(b, n.b)
	case Number:
		return AppendNumber(b, n.num)
	}
	return AppendString(b, n.str)
}

func (n *Node) appendObject(b []byte, export bool) []byte {
	if !export && n.isArray() {
		b = append(b, '[')
		next := 0
		n.kids.ascend(func(k string, c *Node) bool {
			i, _ := strconv.Atoi(k)
			for ; next < i; next++ {
				b = append(b, "null,"...)
			}
			b = c.AppendJSON(b, export)
			b = append(b, ',')
			next++
			return true
		})
		b[len(b)-1] = ']'
		return b
	}
	b = append(b, '{')
	first := true
	n.kids.ascend(func(k string, c *Node) bool {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = AppendString(b, k)
		b = append(b, ':')
		b = c.AppendJSON(b, export)
		return true
	})
	if export && n.prio != nil {
		if !first {
			b = append(b, ',')
		}
		b = append(b, `".priority":`...)
		b = appendLeaf(b, n.prio)
	}
	return append(b, '}')
}

// isArray reports whether the SDKs show the object as an array: every key
// a non-negative integer without leading zeros, the largest under twice
// their number.
func (n *Node) isArray() bool {
	count, max := 0, 0
	ok := true
	n.kids.ascend(func(k string, _ *Node) bool {
		if k != "0" && (k[0] < '1' || k[0] > '9') {
			ok = false
			return false
		}
		i, err := strconv.Atoi(k)
		if err != nil || len(k) > 9 {
			ok = false
			return false
		}
		count++
		max = i
		return true
	})
	return ok && max < 2*count
}

// AppendNumber formats f as JavaScript does.
func AppendNumber(b []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	sign := exp[0]
	exp = strings.TrimLeft(exp[1:], "0")
	return append(append(append(b, mant...), 'e', sign), exp...)
}

// AppendString appends s as a JSON string, escaping as JSON.stringify does.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	plain := 0 // s[plain:i] needs no escape
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[plain:i]...)
		plain = i + 1
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
	}
	b = append(b, s[plain:]...)
	return append(b, '"')
}

// Value is the node as plain Go values (map[string]any, float64, string,
// bool, nil), without priorities: for rules and tests.
func (n *Node) Value() any {
	switch n.kind {
	case Bool:
		return n.b
	case Number:
		return n.num
	case String:
		return n.str
	case Object:
		m := make(map[string]any, n.kids.len())
		n.kids.ascend(func(k string, c *Node) bool { m[k] = c.Value(); return true })
		return m
	}
	return nil
}
