package database

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf16"
)

// Kind is the type of a node's value.
type Kind uint8

// The kinds, in the order values sort in (Object last: every object sorts
// after every leaf, and objects are equal to one another).
const (
	Null Kind = iota
	Bool
	Number
	String
	Object
)

// Node is an immutable JSON value with an optional priority: a leaf (bool,
// number, string) or an object of children kept in key order. The empty
// node (Null) stands for "no data"; an object never holds an empty child.
// Nodes are shared between versions of a tree, so nothing changes one
// after it is built.
type Node struct {
	kind Kind
	b    bool
	num  float64
	str  string
	kids children
	prio *Node // nil or a number or string leaf
	hash atomic.Pointer[string]
}

// Empty is the node of a location with no data.
var Empty = &Node{}

// NewBool, NewNumber and NewString make leaves; NewNumber stores -0 as 0,
// as production does.
func NewBool(b bool) *Node { return &Node{kind: Bool, b: b} }
func NewNumber(f float64) *Node {
	if f == 0 {
		f = 0
	}
	return &Node{kind: Number, num: f}
}
func NewString(s string) *Node   { return &Node{kind: String, str: s} }
func (n *Node) Kind() Kind       { return n.kind }
func (n *Node) IsEmpty() bool    { return n == nil || n.kind == Null }
func (n *Node) IsLeaf() bool     { return n.kind != Null && n.kind != Object }
func (n *Node) Bool() bool       { return n.b }
func (n *Node) Number() float64  { return n.num }
func (n *Node) Str() string      { return n.str }
func (n *Node) NumChildren() int { return n.kids.len() }

// Priority is the node's priority, or nil.
func (n *Node) Priority() *Node { return n.prio }

// Child is the child called key, Empty when there is none.
func (n *Node) Child(key string) *Node {
	if key == ".priority" {
		if n.prio == nil {
			return Empty
		}
		return n.prio
	}
	if n.kind != Object {
		return Empty
	}
	if c := n.kids.get(key); c != nil {
		return c
	}
	return Empty
}

// At is the node at path below n.
func (n *Node) At(p Path) *Node {
	for _, k := range p {
		n = n.Child(k)
		if n.kind == Null {
			return Empty
		}
	}
	return n
}

// Each calls fn with every child in key order until fn returns false.
func (n *Node) Each(fn func(key string, child *Node) bool) {
	if n.kind == Object {
		n.kids.ascend(fn)
	}
}

// EachFrom calls fn with every child from the first key at or after from,
// in key order, until fn returns false.
func (n *Node) EachFrom(from string, fn func(key string, child *Node) bool) {
	if n.kind == Object {
		n.kids.ascendFrom(from, fn)
	}
}

// Keys lists the children's keys in key order.
func (n *Node) Keys() []string {
	keys := make([]string, 0, n.NumChildren())
	n.Each(func(k string, _ *Node) bool { keys = append(keys, k); return true })
	return keys
}

// WithPriority returns n with priority p (nil: none). An empty node takes
// no priority.
func (n *Node) WithPriority(p *Node) *Node {
	if n.IsEmpty() {
		return Empty
	}
	if p.IsEmpty() {
		p = nil
	}
	if n.prio == p {
		return n
	}
	c := &Node{kind: n.kind, b: n.b, num: n.num, str: n.str, kids: n.kids, prio: p}
	return c
}

// WithChild returns n with its child key replaced by c (Empty removes it).
// A leaf becomes an object (keeping its priority); an object left with no
// children becomes Empty.
func (n *Node) WithChild(key string, c *Node) *Node {
	if key == ".priority" {
		return n.WithPriority(c)
	}
	var kids children
	if n.kind == Object {
		kids = n.kids
	}
	if c.IsEmpty() {
		if kids.get(key) == nil {
			return n
		}
		kids = kids.without(key)
	} else {
		kids = kids.with(key, c)
	}
	if kids.len() == 0 {
		return Empty
	}
	return &Node{kind: Object, kids: kids, prio: n.prio}
}

// WithAt returns n with the node at path replaced by c.
func (n *Node) WithAt(p Path, c *Node) *Node {
	if len(p) == 0 {
		return c
	}
	child := n.Child(p[0])
	if len(p) > 1 && p[0] == ".priority" {
		return n
	}
	return n.WithChild(p[0], child.WithAt(p[1:], c))
}

// objectOf builds an object node from children already in key order.
func objectOf(keys []string, nodes []*Node, prio *Node) *Node {
	if len(keys) == 0 {
		return Empty
	}
	return &Node{kind: Object, kids: buildChildren(keys, nodes), prio: prio}
}

// Equal reports whether a and b hold the same data and priorities.
func Equal(a, b *Node) bool {
	if a == b {
		return true
	}
	if a.kind != b.kind || !Equal(orEmpty(a.prio), orEmpty(b.prio)) {
		return false
	}
	switch a.kind {
	case Null:
		return true
	case Bool:
		return a.b == b.b
	case Number:
		return a.num == b.num
	case String:
		return a.str == b.str
	}
	if a.kids.len() != b.kids.len() {
		return false
	}
	eq := true
	a.kids.ascend(func(k string, c *Node) bool {
		eq = Equal(c, b.kids.getOrEmpty(k))
		return eq
	})
	return eq
}

func orEmpty(n *Node) *Node {
	if n == nil {
		return Empty
	}
	return n
}

// Compare orders two values as the Realtime Database does: empty, false,
// true, numbers, strings (by UTF-16 code units, as JavaScript compares),
// then objects, which are all equal.
func Compare(a, b *Node) int {
	if a.kind != b.kind {
		return int(a.kind) - int(b.kind)
	}
	switch a.kind {
	case Bool:
		switch {
		case a.b == b.b:
			return 0
		case !a.b:
			return -1
		}
		return 1
	case Number:
		switch {
		case a.num < b.num:
			return -1
		case a.num > b.num:
			return 1
		}
		return 0
	case String:
		return compareUTF16(a.str, b.str)
	}
	return 0
}

// compareUTF16 compares strings as JavaScript's < does: by UTF-16 code
// units, which differs from byte order only for characters above U+FFFF
// against ones from U+E000 to U+FFFF.
func compareUTF16(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < 0x80 || b[i] < 0x80 {
				return int(a[i]) - int(b[i])
			}
			return compareUnits(a, b)
		}
	}
	return len(a) - len(b)
}

func compareUnits(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return int(ua[i]) - int(ub[i])
		}
	}
	return len(ua) - len(ub)
}

const (
	minName = "[MIN_NAME]"
	maxName = "[MAX_NAME]"
)

// CompareKeys orders keys as the Realtime Database does: keys that are
// 32-bit integers first, numerically (a shorter spelling of the same number
// first), then the others as strings.
func CompareKeys(a, b string) int {
	if a == b {
		return 0
	}
	switch {
	case a == minName || b == maxName:
		return -1
	case b == minName || a == maxName:
		return 1
	}
	ai, aok := intKey(a)
	bi, bok := intKey(b)
	switch {
	case aok && bok:
		if ai == bi {
			return len(a) - len(b)
		}
		if ai < bi {
			return -1
		}
		return 1
	case aok:
		return -1
	case bok:
		return 1
	}
	return compareUTF16(a, b)
}

// intKey parses a key that is an integer of at most ten digits (optional
// minus sign and leading zeros) within 32 bits.
func intKey(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" {
		return 0, false
	}
	start := 0
	for start < len(digits)-1 && digits[start] == '0' {
		start++
	}
	if len(digits)-start > 10 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < math.MinInt32 || v > math.MaxInt32 {
		return 0, false
	}
	return v, true
}

// Hash is the node's hash as the SDKs compute it: base64 SHA-1 of a text
// naming the priority, the type and value of a leaf, or each child's key
// and hash in priority order; "" for the empty node. Transactions send it
// to say which value they were computed from.
func (n *Node) Hash() string {
	if n.kind == Null {
		return ""
	}
	if h := n.hash.Load(); h != nil {
		return *h
	}
	var sb strings.Builder
	if n.prio != nil {
		sb.WriteString("priority:")
		sb.WriteString(hashText(n.prio))
		sb.WriteString(":")
	}
	if n.kind == Object {
		for _, c := range n.sortedChildren(Index{Kind: ByPriority}) {
			if h := c.node.Hash(); h != "" {
				sb.WriteString(":")
				sb.WriteString(c.key)
				sb.WriteString(":")
				sb.WriteString(h)
			}
		}
	} else {
		sb.WriteString(hashText(n))
	}
	h := ""
	if sb.Len() > 0 {
		sum := sha1.Sum([]byte(sb.String()))
		h = base64.StdEncoding.EncodeToString(sum[:])
	}
	n.hash.Store(&h)
	return h
}

// hashText is a leaf as the hash spells it: its JavaScript type and value,
// numbers as the hex of their IEEE 754 bits.
func hashText(n *Node) string {
	switch n.kind {
	case Bool:
		return "boolean:" + strconv.FormatBool(n.b)
	case Number:
		return fmt.Sprintf("number:%016x", math.Float64bits(n.num))
	}
	return "string:" + n.str
}

// SizeAtMost reports whether the node's JSON is about limit bytes or
// fewer, looking at no more of a larger node than it needs to.
func (n *Node) SizeAtMost(limit int) bool { return n.sizeUpTo(limit) <= limit }

// sizeUpTo is the approximate size of the node's JSON, counted until it
// passes limit.
func (n *Node) sizeUpTo(limit int) int {
	switch n.kind {
	case Null:
		return 4
	case Bool:
		return 5
	case Number:
		return 8
	case String:
		return len(n.str) + 2
	}
	size := 2
	n.kids.ascend(func(k string, c *Node) bool {
		size += len(k) + 4 + c.sizeUpTo(limit-size)
		return size <= limit
	})
	return size
}
