package database

import (
	"context"

	"github.com/loupe-dev/loupe/internal/identity"
)

// Update is what a listener is sent after a commit: the data at Path
// (Merge false), or the listed children of Path (Merge true; an Empty
// child was removed).
type Update struct {
	Path     Path
	Value    *Node
	Merge    bool
	Children []Child
}

// Child is one child of a merge, by its path below the merge's Path.
type Child struct {
	Path  Path
	Value *Node
}

// listener is one listen: a location, a query, and where its updates go.
type listener struct {
	path  Path
	query Query
	fn    func(Update)
	// last is what the listener was last sent, for a filtered query.
	last *Node
	// live is false while the listen's first data is judged and sent
	// (Listen); the commits published meanwhile wait in pending. Both are
	// under Engine.pubMu.
	live    bool
	pending []*Commit
}

// Listen calls fn with the data at p (narrowed by q) once the caller may
// read it, and from then on with every change to it, in commit order,
// until cancel is called. No commit falls between the first call and the
// next, and none is sent twice: the first data is the durable data when
// the listen starts, and the commits published after it are sent after it.
//
// The rules check and the first call (which may send a whole subtree) run
// on the caller's goroutine without the engine's publishing lock, so a slow
// listen holds up no other listener: the commits published meanwhile are
// kept for this listen and sent once its first call returns. Later calls
// run under the publishing lock and must not block.
func (e *Engine) Listen(ctx context.Context, ns string, p Path, q Query, caller identity.Principal, fn func(Update)) (cancel func(), err error) {
	if err := CheckNamespace(ns); err != nil {
		return nil, err
	}
	e.mu.Lock()
	s := e.namespaceLocked(ns)
	e.mu.Unlock()
	l := &listener{path: p, query: q, fn: fn}
	e.pubMu.Lock()
	root := s.durable.Load()
	s.listeners[l] = struct{}{}
	e.pubMu.Unlock()
	cancel = func() {
		e.pubMu.Lock()
		delete(s.listeners, l)
		l.pending = nil
		e.pubMu.Unlock()
	}
	if err := e.authorizeRead(ctx, ReadAccess{NS: ns, Path: p, Query: q, Root: root, Caller: caller, Method: "listen"}); err != nil {
		cancel()
		return nil, err
	}
	first := q.Apply(root.At(p))
	if q.Filtered() {
		l.last = first
	}
	fn(Update{Path: p, Value: first})
	e.pubMu.Lock()
	for _, c := range l.pending {
		l.notify(c)
	}
	l.live, l.pending = true, nil
	e.pubMu.Unlock()
	return cancel, nil
}

// MayListen judges again, against the rules in force and the data now,
// whether caller may keep a listen at p (narrowed by q): production re-judges
// open listens when the rules or a session's credential change, and revokes
// those no longer allowed.
func (e *Engine) MayListen(ctx context.Context, ns string, p Path, q Query, caller identity.Principal) error {
	s := e.lookup(ns)
	if s == nil {
		return nil
	}
	return e.authorizeRead(ctx, ReadAccess{NS: ns, Path: p, Query: q, Root: s.durable.Load(), Caller: caller, Method: "listen"})
}

// Indexed reports whether the installed index source indexes ix at p of
// ns; true when there is none, or for orders that need no index.
func (e *Engine) Indexed(ns string, p Path, ix Index) bool {
	if ix.Kind == ByKey || ix.Kind == ByPriority {
		return true
	}
	if idx, ok := e.authorizer().(Indexes); ok {
		return idx.Indexed(ns, p, ix)
	}
	return false
}

// notify sends the listener what c changed of its data.
func (l *listener) notify(c *Commit) {
	if !c.Path.Related(l.path) && !anyRelated(c.Changes, l.path) {
		return
	}
	if l.query.Filtered() {
		l.notifyQuery(c)
		return
	}
	if c.Path.HasPrefix(l.path) {
		if !c.Merge {
			if c.Before.At(c.Path) != c.After.At(c.Path) {
				l.fn(Update{Path: c.Path, Value: c.After.At(c.Path)})
			}
			return
		}
		var kids []Child
		for _, ch := range c.Changes {
			if ch.Before != ch.After {
				kids = append(kids, Child{Path: ch.Path[len(c.Path):], Value: ch.After})
			}
		}
		if len(kids) > 0 {
			l.fn(Update{Path: c.Path, Merge: true, Children: kids})
		}
		return
	}
	if before, after := c.Before.At(l.path), c.After.At(l.path); before != after && !Equal(before, after) {
		l.fn(Update{Path: l.path, Value: after})
	}
}

func anyRelated(changes []Change, p Path) bool {
	for _, ch := range changes {
		if ch.Path.Related(p) {
			return true
		}
	}
	return false
}

// notifyQuery sends a filtered listener the children that entered, left or
// changed in its window, as a merge.
func (l *listener) notifyQuery(c *Commit) {
	at := c.After.At(l.path)
	if at == c.Before.At(l.path) {
		return
	}
	next := l.query.Apply(at)
	kids := diffChildren(l.last, next)
	l.last = next
	if len(kids) > 0 {
		l.fn(Update{Path: l.path, Merge: true, Children: kids})
	}
}

// diffChildren lists the children of b that differ from a's, and a's
// children that b lacks (as Empty).
func diffChildren(a, b *Node) []Child {
	var out []Child
	a.Each(func(k string, c *Node) bool {
		if b.Child(k).IsEmpty() {
			out = append(out, Child{Path: Path{k}, Value: Empty})
		}
		return true
	})
	b.Each(func(k string, c *Node) bool {
		if old := a.Child(k); old != c && !Equal(old, c) {
			out = append(out, Child{Path: Path{k}, Value: c})
		}
		return true
	})
	return out
}
