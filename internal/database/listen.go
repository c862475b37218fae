package database

import (
	"context"
	"sync"

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
	// shared holds the encodings made of this update, for every listener
	// of the commit sent the same update; nil for one no other is sent.
	shared *encodings
}

// encodings are the bytes adapters made of one update, by key.
type encodings struct {
	mu sync.Mutex
	m  map[string][]byte
}

// Encoded returns encode's bytes for u under key (the wire format and what
// else the bytes depend on, such as a listen's tag): encode runs once for
// all the listeners of a commit that are sent the same update, the others
// get the same bytes, which nobody may modify.
func (u Update) Encoded(key string, encode func() []byte) []byte {
	if u.shared == nil {
		return encode()
	}
	u.shared.mu.Lock()
	defer u.shared.mu.Unlock()
	b, ok := u.shared.m[key]
	if !ok {
		b = encode()
		if u.shared.m == nil {
			u.shared.m = map[string][]byte{}
		}
		u.shared.m[key] = b
	}
	return b
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
	// mu is held while fn runs; cancelled, under it, is set by cancel, so
	// that fn is not called once cancel returns.
	mu        sync.Mutex
	cancelled bool
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
// run on the commit pipeline, after the publishing lock, and must not
// block; fn is not called once cancel has returned.
func (e *Engine) Listen(ctx context.Context, ns string, p Path, q Query, caller identity.Principal, fn func(Update)) (cancel func(), err error) {
	if err := CheckNamespace(ns); err != nil {
		return nil, err
	}
	s := e.namespace(ns)
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
		l.mu.Lock()
		l.cancelled = true
		l.mu.Unlock()
	}
	if err := e.authorizeRead(ctx, ReadAccess{NS: ns, Path: p, Query: q, Root: root, Caller: caller, Method: "listen"}); err != nil {
		cancel()
		return nil, err
	}
	first := q.Apply(root.At(p))
	if q.Filtered() {
		l.last = first
	}
	l.send(Update{Path: p, Value: first})
	e.pubMu.Lock()
	for _, c := range l.pending {
		if u, ok := l.update(c, nil); ok {
			l.send(u)
		}
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

// delivery is an update on its way to a listener.
type delivery struct {
	l *listener
	u Update
}

// send calls the listener's fn with u unless it was cancelled.
func (l *listener) send(u Update) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.cancelled {
		l.fn(u)
	}
}

// update is what c changed of the listener's data, if anything; Engine.pubMu
// is held. Listeners sent the same update of c share its encodings through
// shared (by what the update depends on beside c); nil shares none.
func (l *listener) update(c *Commit, shared map[string]*encodings) (Update, bool) {
	if !c.Path.Related(l.path) && !anyRelated(c.Changes, l.path) {
		return Update{}, false
	}
	if l.query.Filtered() {
		return l.updateQuery(c)
	}
	if c.Path.HasPrefix(l.path) {
		// The commit's own locations, the same for every listener above them.
		if !c.Merge {
			if c.Before.At(c.Path) != c.After.At(c.Path) {
				return Update{Path: c.Path, Value: c.After.At(c.Path), shared: sharedFor(shared, "")}, true
			}
			return Update{}, false
		}
		var kids []Child
		for _, ch := range c.Changes {
			if ch.Before != ch.After {
				kids = append(kids, Child{Path: ch.Path[len(c.Path):], Value: ch.After})
			}
		}
		if len(kids) > 0 {
			return Update{Path: c.Path, Merge: true, Children: kids, shared: sharedFor(shared, "")}, true
		}
		return Update{}, false
	}
	if before, after := c.Before.At(l.path), c.After.At(l.path); before != after && !Equal(before, after) {
		return Update{Path: l.path, Value: after, shared: sharedFor(shared, "/"+l.path.String())}, true
	}
	return Update{}, false
}

// sharedFor returns the encodings in shared under key, adding them.
func sharedFor(shared map[string]*encodings, key string) *encodings {
	if shared == nil {
		return nil
	}
	enc := shared[key]
	if enc == nil {
		enc = &encodings{}
		shared[key] = enc
	}
	return enc
}

func anyRelated(changes []Change, p Path) bool {
	for _, ch := range changes {
		if ch.Path.Related(p) {
			return true
		}
	}
	return false
}

// updateQuery is the children that entered, left or changed in a filtered
// listener's window, as a merge.
func (l *listener) updateQuery(c *Commit) (Update, bool) {
	at := c.After.At(l.path)
	if at == c.Before.At(l.path) {
		return Update{}, false
	}
	next := l.query.Apply(at)
	kids := diffChildren(l.last, next)
	l.last = next
	if len(kids) > 0 {
		return Update{Path: l.path, Merge: true, Children: kids}, true
	}
	return Update{}, false
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
