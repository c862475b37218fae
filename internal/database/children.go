package database

import (
	"slices"

	"github.com/google/btree"
)

// smallMax is the most children kept in a sorted slice; above it they move
// to a copy-on-write B-tree, so that changing one child of a large object
// copies O(log n) rather than the whole list.
const smallMax = 32

// entry is one child.
type entry struct {
	key  string
	node *Node
}

func entryLess(a, b entry) bool { return CompareKeys(a.key, b.key) < 0 }

// children is an object's children in key order. Values are immutable:
// with and without return new ones that share what did not change.
type children struct {
	small []entry
	big   *btree.BTreeG[entry]
}

// buildChildren makes children from keys already in key order.
func buildChildren(keys []string, nodes []*Node) children {
	if len(keys) <= smallMax {
		small := make([]entry, len(keys))
		for i := range keys {
			small[i] = entry{keys[i], nodes[i]}
		}
		return children{small: small}
	}
	t := btree.NewG(32, entryLess)
	for i := range keys {
		t.ReplaceOrInsert(entry{keys[i], nodes[i]})
	}
	return children{big: t}
}

func (c children) len() int {
	if c.big != nil {
		return c.big.Len()
	}
	return len(c.small)
}

func (c children) search(key string) (int, bool) {
	return slices.BinarySearchFunc(c.small, key, func(e entry, k string) int { return CompareKeys(e.key, k) })
}

func (c children) get(key string) *Node {
	if c.big != nil {
		e, ok := c.big.Get(entry{key: key})
		if !ok {
			return nil
		}
		return e.node
	}
	i, ok := c.search(key)
	if !ok {
		return nil
	}
	return c.small[i].node
}

func (c children) getOrEmpty(key string) *Node {
	if n := c.get(key); n != nil {
		return n
	}
	return Empty
}

func (c children) with(key string, n *Node) children {
	if c.big != nil {
		t := c.big.Clone()
		t.ReplaceOrInsert(entry{key, n})
		return children{big: t}
	}
	i, ok := c.search(key)
	if ok {
		small := slices.Clone(c.small)
		small[i].node = n
		return children{small: small}
	}
	if len(c.small) < smallMax {
		small := make([]entry, 0, len(c.small)+1)
		small = append(small, c.small[:i]...)
		small = append(small, entry{key, n})
		small = append(small, c.small[i:]...)
		return children{small: small}
	}
	t := btree.NewG(32, entryLess)
	for _, e := range c.small {
		t.ReplaceOrInsert(e)
	}
	t.ReplaceOrInsert(entry{key, n})
	return children{big: t}
}

func (c children) without(key string) children {
	if c.big != nil {
		t := c.big.Clone()
		t.Delete(entry{key: key})
		if t.Len() <= smallMax/2 {
			small := make([]entry, 0, t.Len())
			t.Ascend(func(e entry) bool { small = append(small, e); return true })
			return children{small: small}
		}
		return children{big: t}
	}
	i, ok := c.search(key)
	if !ok {
		return c
	}
	return children{small: slices.Delete(slices.Clone(c.small), i, i+1)}
}

// ascend calls fn in key order until it returns false.
func (c children) ascend(fn func(string, *Node) bool) {
	if c.big != nil {
		c.big.Ascend(func(e entry) bool { return fn(e.key, e.node) })
		return
	}
	for _, e := range c.small {
		if !fn(e.key, e.node) {
			return
		}
	}
}

// ascendFrom calls fn in key order from the first key >= from.
func (c children) ascendFrom(from string, fn func(string, *Node) bool) {
	if c.big != nil {
		c.big.AscendGreaterOrEqual(entry{key: from}, func(e entry) bool { return fn(e.key, e.node) })
		return
	}
	i, _ := c.search(from)
	for _, e := range c.small[i:] {
		if !fn(e.key, e.node) {
			return
		}
	}
}
