package database

import (
	"slices"
	"strings"
)

// IndexKind says what a query orders children by.
type IndexKind uint8

// The orders a query can take.
const (
	ByPriority IndexKind = iota // the default
	ByKey
	ByValue
	ByChild
)

// Index is what a query orders children by; Path is the child path of
// ByChild.
type Index struct {
	Kind IndexKind
	Path Path
}

// String is the index as the wire protocol's "i" spells it: ".priority",
// ".key", ".value" or the child path ("a/b").
func (ix Index) String() string {
	switch ix.Kind {
	case ByKey:
		return ".key"
	case ByValue:
		return ".value"
	case ByChild:
		return strings.Join(ix.Path, "/")
	}
	return ".priority"
}

// ParseIndex reads an index as the wire protocol spells it.
func ParseIndex(s string) (Index, error) {
	switch s {
	case "", ".priority", "$priority":
		return Index{Kind: ByPriority}, nil
	case ".key", "$key":
		return Index{Kind: ByKey}, nil
	case ".value", "$value":
		return Index{Kind: ByValue}, nil
	}
	p, err := ParsePath(s)
	if err != nil {
		return Index{}, err
	}
	if len(p) == 0 {
		return Index{Kind: ByKey}, nil
	}
	return Index{Kind: ByChild, Path: p}, nil
}

// value is what the index orders child by.
func (ix Index) value(key string, child *Node) *Node {
	switch ix.Kind {
	case ByKey:
		return NewString(key)
	case ByValue:
		return child
	case ByChild:
		return child.At(ix.Path)
	}
	return orEmpty(child.prio)
}

// compare orders two children by the index, then by key.
func (ix Index) compare(ak string, av *Node, bk string, bv *Node) int {
	if ix.Kind != ByKey {
		if c := Compare(ix.value(ak, av), ix.value(bk, bv)); c != 0 {
			return c
		}
	}
	return CompareKeys(ak, bk)
}

// Bound is one end of a query's range: an index value and, optionally, a
// key that breaks ties among children with that value.
type Bound struct {
	Value     *Node
	Key       string // minName / maxName when HasKey is false
	HasKey    bool
	Inclusive bool
}

// Query narrows the children of a location: an order, an optional range
// and an optional limit from either end. The zero Query (by priority, no
// range, no limit) is the default: the location's whole data.
type Query struct {
	Index     Index
	Start     *Bound
	End       *Bound
	Limit     int
	HasLimit  bool
	FromRight bool // limitToLast
}

// IsDefault reports whether q loads the location's whole data.
func (q Query) IsDefault() bool {
	return q.Start == nil && q.End == nil && !q.HasLimit
}

// Filtered reports whether the query narrows the data (whatever its order).
func (q Query) Filtered() bool { return !q.IsDefault() }

// startPost and endPost are the bounds as (value, key) pairs.
func (q Query) startKey() string {
	if q.Start.HasKey {
		return q.Start.Key
	}
	return minName
}

func (q Query) endKey() string {
	if q.End.HasKey {
		return q.End.Key
	}
	return maxName
}

// boundCompare orders a child against a bound (value, key).
func (q Query) boundCompare(key string, child *Node, bv *Node, bkey string) int {
	ix := q.Index
	if ix.Kind == ByKey {
		// A key bound is the bound's value, a string.
		bk := bkey
		if bv != nil && bv.kind == String {
			bk = bv.str
		}
		return CompareKeys(key, bk)
	}
	if c := Compare(ix.value(key, child), orEmpty(bv)); c != 0 {
		return c
	}
	return CompareKeys(key, bkey)
}

// matches reports whether a child is inside the query's range.
func (q Query) matches(key string, child *Node) bool {
	if q.Start != nil {
		c := q.boundCompare(key, child, q.Start.Value, q.startKey())
		if c < 0 || (c == 0 && !q.Start.Inclusive) {
			return false
		}
	}
	if q.End != nil {
		c := q.boundCompare(key, child, q.End.Value, q.endKey())
		if c > 0 || (c == 0 && !q.End.Inclusive) {
			return false
		}
	}
	return true
}

// keyed is a child with its key.
type keyed struct {
	key  string
	node *Node
}

// sortedChildren lists n's children in the index's order.
func (n *Node) sortedChildren(ix Index) []keyed {
	out := make([]keyed, 0, n.NumChildren())
	n.Each(func(k string, c *Node) bool { out = append(out, keyed{k, c}); return true })
	if ix.Kind == ByKey || (ix.Kind == ByPriority && !n.anyPriority()) {
		return out
	}
	slices.SortStableFunc(out, func(a, b keyed) int { return ix.compare(a.key, a.node, b.key, b.node) })
	return out
}

func (n *Node) anyPriority() bool {
	found := false
	n.Each(func(_ string, c *Node) bool { found = c.prio != nil; return !found })
	return found
}

// Apply returns the part of n the query selects: the children in range,
// limited from the start or the end. A leaf has no children to select: a
// filtered query of one is empty.
func (q Query) Apply(n *Node) *Node {
	if q.IsDefault() {
		return n
	}
	if n.kind != Object {
		return Empty
	}
	return objectFromKeyed(q.Select(n))
}

// Select lists the children the query selects, in the index's order.
func (q Query) Select(n *Node) []keyed {
	var all []keyed
	if q.Index.Kind == ByKey {
		all = q.scanKeys(n)
	} else {
		all = n.sortedChildren(q.Index)
	}
	in := all[:0:0]
	for _, c := range all {
		if q.matches(c.key, c.node) {
			in = append(in, c)
		}
	}
	if q.HasLimit && len(in) > q.Limit {
		if q.FromRight {
			in = in[len(in)-q.Limit:]
		} else {
			in = in[:q.Limit]
		}
	}
	return in
}

// scanKeys lists the children in a key-ordered query's range straight from
// the key-ordered children, stopping at the limit when it counts from the
// start.
func (q Query) scanKeys(n *Node) []keyed {
	var out []keyed
	stop := func() bool { return q.HasLimit && !q.FromRight && len(out) >= q.Limit }
	visit := func(k string, c *Node) bool {
		if q.End != nil && !q.matches(k, c) && q.boundCompare(k, c, q.End.Value, q.endKey()) > 0 {
			return false
		}
		if q.matches(k, c) {
			out = append(out, keyed{k, c})
		}
		return !stop()
	}
	if q.Start != nil && q.Start.Value != nil && q.Start.Value.kind == String {
		n.kids.ascendFrom(q.Start.Value.str, visit)
	} else {
		n.Each(visit)
	}
	return out
}

// objectFromKeyed builds an object of children in any order.
func objectFromKeyed(sel []keyed) *Node {
	sorted := slices.Clone(sel)
	slices.SortFunc(sorted, func(a, b keyed) int { return CompareKeys(a.key, b.key) })
	keys := make([]string, len(sorted))
	nodes := make([]*Node, len(sorted))
	for i, c := range sorted {
		keys[i], nodes[i] = c.key, c.node
	}
	return objectOf(keys, nodes, nil)
}
