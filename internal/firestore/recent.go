package firestore

import (
	"sync"
	"sync/atomic"
)

// Recent is a bounded concurrent map of values built from their keys on
// first use: what the streams a commit fans out to share (a decoded
// document, a response, a response's encoding), so that each is built once
// however many streams send it. It keeps two generations rather than track
// recency: once Max values were built into the current one, it becomes the
// previous (the one before is dropped), so a value stays for at least Max
// builds and a stream a little behind the others still finds what they
// built. Lookups take no lock. The zero value holds 1,024 to 2,048 entries.
type Recent[K comparable, V any] struct {
	gens atomic.Pointer[recentGens]
	n    atomic.Int32 // values built into the current generation
	// Max is the number of values built into a generation before it is the
	// previous one (0: 1,024).
	Max int32
}

type recentGens struct{ cur, prev *sync.Map }

// Get returns the value stored under k, storing build's on first use. When
// two callers build at once, both get the value stored first.
func (c *Recent[K, V]) Get(k K, build func() V) V {
	g := c.gens.Load()
	if g != nil {
		if v, ok := g.cur.Load(k); ok {
			return v.(V)
		}
		if v, ok := g.prev.Load(k); ok {
			return v.(V)
		}
	}
	v := build()
	limit := c.Max
	if limit == 0 {
		limit = 1024
	}
	if g == nil || c.n.Add(1) > limit {
		prev := new(sync.Map)
		if g != nil {
			prev = g.cur
		}
		if c.gens.CompareAndSwap(g, &recentGens{cur: new(sync.Map), prev: prev}) {
			c.n.Store(0)
		}
		g = c.gens.Load()
	}
	actual, _ := g.cur.LoadOrStore(k, v)
	return actual.(V)
}

// Len is the number of values built into the current generation.
func (c *Recent[K, V]) Len() int { return int(c.n.Load()) }
