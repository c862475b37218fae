package firestore

import (
	"sync"
	"sync/atomic"
)

// Recent is a bounded concurrent map of values built from their keys on
// first use: what the streams a commit fans out to share (a decoded
// document, a response, a response's encoding), so that each is built once
// however many streams send it. It starts over when full rather than track
// recency, as a fan-out looks its values up right after they are built.
// Lookups take no lock. The zero value holds up to 1,024 entries.
type Recent[K comparable, V any] struct {
	m atomic.Pointer[sync.Map]
	n atomic.Int32 // entries stored in m
	// Max is the number of entries kept before it starts over (0: 1,024).
	Max int32
}

// Get returns the value stored under k, storing build's on first use. When
// two callers build at once, both get the value stored first.
func (c *Recent[K, V]) Get(k K, build func() V) V {
	entries := c.m.Load()
	if entries != nil {
		if v, ok := entries.Load(k); ok {
			return v.(V)
		}
	}
	v := build()
	limit := c.Max
	if limit == 0 {
		limit = 1024
	}
	if entries == nil || c.n.Add(1) > limit {
		entries = new(sync.Map)
		c.m.Store(entries)
		c.n.Store(0)
	}
	actual, _ := entries.LoadOrStore(k, v)
	return actual.(V)
}

// Len is the number of entries held now.
func (c *Recent[K, V]) Len() int { return int(c.n.Load()) }
