package triggers

import (
	"strconv"
	"strings"
)

// DataWrite is a Realtime Database write as the table matches it against
// the ref patterns of database triggers (Event.Write). A trigger on
// "users/{uid}" fires for a write at "users/u1/name" (below its location),
// at "users" or at the root (above it: once for each user whose data the
// write changed), and once for a multi-path update touching several fields
// of one user; each event carries the data at the trigger's location.
type DataWrite interface {
	// Paths are the locations the write set, as segments.
	Paths() [][]string
	// Changed lists the keys of the children of path whose data the write
	// changed.
	Changed(path []string) []string
	// At is the event at path: its Types (DatabaseWritten, and
	// DatabaseCreated, DatabaseUpdated or DatabaseDeleted) and Data ({"data":
	// before, "delta": the change}); ok is false when the write left the
	// data at path as it was.
	At(path []string) (types []string, data []byte, ok bool)
}

// instances lists the locations matching the pattern that w touched: each
// written path cut to the pattern's length when it is deeper, and extended
// below it through the changed children when it is shallower. A {x=**}
// segment takes a deeper written path whole, or one changed child level of a
// shallower one.
func (p pattern) instances(w DataWrite) [][]string {
	seen := map[string]bool{}
	var out [][]string
	add := func(at []string) {
		key := strings.Join(at, "/")
		if !seen[key] {
			seen[key] = true
			out = append(out, at)
		}
	}
	for _, written := range w.Paths() {
		p.expand(w, written, nil, add)
	}
	return out
}

// expand extends at, which matches the pattern's first len(at) segments,
// along written and then through w's changed children.
func (p pattern) expand(w DataWrite, written, at []string, add func([]string)) {
	i := len(at)
	if i == len(p.segments) {
		add(at)
		return
	}
	seg := p.segments[i]
	next := func(key string) []string { return append(at[:i:i], key) }
	switch {
	case multiSegment(seg) && len(written) > i:
		add(written)
	case multiSegment(seg):
		for _, k := range w.Changed(at) {
			add(next(k))
		}
	case i < len(written):
		if wildcard(seg) || seg == written[i] {
			p.expand(w, written, next(written[i]), add)
		}
	case wildcard(seg):
		for _, k := range w.Changed(at) {
			p.expand(w, written, next(k), add)
		}
	default:
		p.expand(w, written, next(seg), add)
	}
}

func multiSegment(seg string) bool { return seg == "**" || strings.HasSuffix(seg, "=**}") }

func wildcard(seg string) bool {
	return seg == "*" || strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}")
}

// instanceMatches reports whether a database trigger's instance pattern
// ("" or "*" or "{name}" for any) names the event's instance.
func instanceMatches(pattern, instance string) bool {
	return pattern == "" || wildcard(pattern) || pattern == instance
}

// dataEvents expands database events that carry their write into the
// events at one location each, caching them by location so that triggers
// sharing a location share the event.
type dataEvents struct {
	e      Event
	byPath map[string]*Event // nil entries: the data there did not change
}

// at is the event at path, or nil when the write did not change it there.
func (x *dataEvents) at(path []string) *Event {
	key := strings.Join(path, "/")
	if ev, ok := x.byPath[key]; ok {
		return ev
	}
	types, data, ok := x.e.Write.At(path)
	var ev *Event
	if ok {
		e := x.e
		e.ID = x.e.ID + "-" + strconv.Itoa(len(x.byPath))
		e.Resource, e.Types, e.Data, e.Write = key, types, data, nil
		ev = &e
	}
	x.byPath[key] = ev
	return ev
}

// matching lists the events of x a database trigger gets.
func (x *dataEvents) matching(t Trigger, p pattern) []Event {
	if t.Source != Database || !instanceMatches(t.Instance, x.e.Instance) {
		return nil
	}
	var out []Event
	for _, path := range p.instances(x.e.Write) {
		if ev := x.at(path); ev != nil && ev.is(t.EventType) {
			out = append(out, *ev)
		}
	}
	return out
}
