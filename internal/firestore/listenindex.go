package firestore

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"
)

// targetIndex finds the listen targets a document change may affect without
// visiting the others: document targets by the paths they name; query
// targets by the collection they read (a collection group's by its id), and
// within it by the value of an equality (or IN) filter on a field when they
// have one, so that a commit to a collection many users each watch a slice
// of reaches only the streams of the slices it touches.
//
// Targets that watch the same thing (the same query of the same parent, or
// the same documents) share a targetGroup, whatever their streams: the
// index holds groups, so a change is matched against a query once however
// many streams listen to it, and the paths it changed are appended once to
// the group's log, which each target reads from where it last caught up.
//
// Every published commit goes through publish, which appends the paths a
// commit may have changed to each affected group's log and signals its
// targets' streams; the streams work out the rest. The index holds no
// documents.
type targetIndex struct {
	mu      sync.RWMutex
	byKey   map[string]*targetGroup    // groups by key
	docs    map[string]groupSet        // database "\x00" document path → document groups
	colls   map[string]*shapeIndex     // database "\x00" collection path → query groups of that collection
	groups  map[string]*shapeIndex     // database "\x00" collection id ("" for every id) → collection-group query groups
	pipes   map[string]groupSet        // pipeKey → pipeline groups, changed by any commit in their scope
	streams map[*ListenStream]struct{} // streams with targets, for RecheckListeners
}

type groupSet map[*targetGroup]struct{}

// watched is what a listen target watches: a query, documents or a
// realtime pipeline of a database.
type watched struct {
	database string
	plan     *plan         // a query
	pipeline PipelineRead  // a pipeline: read again whole on any change in its scope
	scope    PipelineScope // the pipeline's
	window   bool          // a query with a limit or offset, or a pipeline: read again whole on any change
	prefix   string        // of the paths in the query's scope: its parent's path and "/", or ""
	paths    []string      // documents
}

// targetGroup is what the targets watching one thing share: what they
// watch and the log of paths that changed in it.
type targetGroup struct {
	key string
	watched
	targets map[*listenTarget]struct{} // under targetIndex.mu

	mu   sync.Mutex
	log  []string // paths that may have changed, oldest first (not kept for a window)
	base uint64   // the position of log[0] since the group began
}

// shapeIndex holds the query groups of one collection (or collection
// group): those with an indexable equality filter by its field and value
// key, the rest in any.
type shapeIndex struct {
	any groupSet
	eq  map[string]*eqIndex // by field path
}

type eqIndex struct {
	path    FieldPath
	byValue map[string]groupSet
}

func newTargetIndex() *targetIndex {
	return &targetIndex{byKey: map[string]*targetGroup{}, docs: map[string]groupSet{}, colls: map[string]*shapeIndex{}, groups: map[string]*shapeIndex{}, pipes: map[string]groupSet{}, streams: map[*ListenStream]struct{}{}}
}

// groupKey names what a target watches: its database and either the
// query's parent and deterministic encoding or its documents' paths. A
// pipeline target's group is its own: its reader carries its caller.
func groupKey(t *listenTarget) string {
	if t.pipeline != nil {
		return fmt.Sprintf("%s\x00p\x00%p", t.database, t)
	}
	if t.plan == nil {
		return t.database + "\x00d\x00" + strings.Join(t.paths, "\x00")
	}
	q, _ := proto.MarshalOptions{Deterministic: true}.Marshal(t.plan.query)
	return t.database + "\x00q\x00" + t.prefix + "\x00" + string(q)
}

// end is the log position after the last path appended.
func (g *targetGroup) end() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.base + uint64(len(g.log))
}

// appendPath logs that path may have changed in the group's results. The
// log keeps the latest maxChangedPaths paths at least; a target further
// behind reads the whole target again.
func (g *targetGroup) appendPath(path string) {
	if g.window {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.log) >= 2*maxChangedPaths {
		g.base += uint64(len(g.log) - maxChangedPaths)
		g.log = append(g.log[:0:0], g.log[len(g.log)-maxChangedPaths:]...)
	}
	g.log = append(g.log, path)
}

// since returns the distinct paths logged from position from on and the
// position after them; rescan is true when the target must be read whole
// instead (a window, or more than maxChangedPaths behind).
func (g *targetGroup) since(from uint64) (paths []string, next uint64, rescan bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	next = g.base + uint64(len(g.log))
	if g.window {
		return nil, next, true
	}
	if from < g.base || next-from > maxChangedPaths {
		return nil, next, true
	}
	logged := g.log[from-g.base:]
	if len(logged) == 1 {
		return []string{logged[0]}, next, false
	}
	seen := make(map[string]struct{}, len(logged))
	for _, p := range logged {
		if _, dup := seen[p]; !dup {
			seen[p] = struct{}{}
			paths = append(paths, p)
		}
	}
	return paths, next, false
}

// signal tells the stream of every target of the group that it changed.
func (g *targetGroup) signal() {
	for t := range g.targets {
		t.s.changed(t)
	}
}

// eqKey is a key for a value under which equal values (by query equality:
// 1 == 1.0) meet, for the types an equality filter is indexed by; ok is
// false for the others.
func eqKey(v *pb.Value) (string, bool) {
	switch x := v.GetValueType().(type) {
	case *pb.Value_StringValue:
		return "s" + x.StringValue, true
	case *pb.Value_BooleanValue:
		return "b" + strconv.FormatBool(x.BooleanValue), true
	case *pb.Value_IntegerValue:
		return "n" + strconv.FormatInt(x.IntegerValue, 10), true
	case *pb.Value_DoubleValue:
		d := x.DoubleValue
		if d == math.Trunc(d) && math.Abs(d) < 1<<63 {
			return "n" + strconv.FormatInt(int64(d), 10), true
		}
		if math.IsNaN(d) {
			return "", false
		}
		return "d" + strconv.FormatFloat(d, 'g', -1, 64), true
	case *pb.Value_ReferenceValue:
		return "r" + x.ReferenceValue, true
	}
	return "", false
}

// indexedEquality returns the field and value keys a query is indexed by:
// those of its first top-level equality or IN filter whose values all have
// keys; ok is false when it has none.
func indexedEquality(q *pb.StructuredQuery) (FieldPath, []string, bool) {
	for _, f := range conjuncts(q.GetWhere()) {
		var values []*pb.Value
		switch f.GetOp() {
		case pb.StructuredQuery_FieldFilter_EQUAL:
			values = []*pb.Value{f.GetValue()}
		case pb.StructuredQuery_FieldFilter_IN:
			values = f.GetValue().GetArrayValue().GetValues()
		default:
			continue
		}
		path, err := ParseFieldPath(f.GetField().GetFieldPath())
		if err != nil || isName(path) || len(values) == 0 {
			continue
		}
		keys := make([]string, 0, len(values))
		for _, v := range values {
			k, ok := eqKey(v)
			if !ok {
				keys = nil
				break
			}
			keys = append(keys, k)
		}
		if keys != nil {
			return path, keys, true
		}
	}
	return nil, nil, false
}

// bucket returns the key of the shape index a query group lives in, and
// which map holds it.
func (x *targetIndex) bucket(g *targetGroup) (map[string]*shapeIndex, string) {
	if g.plan.descendants {
		return x.groups, g.database + "\x00" + g.plan.collection
	}
	return x.colls, g.database + "\x00" + g.prefix + g.plan.collection
}

// add registers a target, in the group of the targets that watch the same
// thing; from then on publish reports its changes. The target reads the
// group's log from its end now.
func (x *targetIndex) add(t *listenTarget) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.streams[t.s] = struct{}{}
	key := groupKey(t)
	g := x.byKey[key]
	if g == nil {
		g = &targetGroup{key: key, watched: t.watched, targets: map[*listenTarget]struct{}{}}
		x.byKey[key] = g
		x.register(g)
	}
	g.targets[t] = struct{}{}
	t.group, t.cursor = g, g.end()
}

// register indexes a new group.
func (x *targetIndex) register(g *targetGroup) {
	if g.pipeline != nil {
		k := pipeKey(g.database, g.scope)
		if x.pipes[k] == nil {
			x.pipes[k] = groupSet{}
		}
		x.pipes[k][g] = struct{}{}
		return
	}
	if g.plan == nil {
		for _, p := range g.paths {
			k := g.database + "\x00" + p
			if x.docs[k] == nil {
				x.docs[k] = groupSet{}
			}
			x.docs[k][g] = struct{}{}
		}
		return
	}
	m, k := x.bucket(g)
	si := m[k]
	if si == nil {
		si = &shapeIndex{any: groupSet{}, eq: map[string]*eqIndex{}}
		m[k] = si
	}
	path, keys, ok := indexedEquality(g.plan.query)
	if !ok {
		si.any[g] = struct{}{}
		return
	}
	ei := si.eq[path.String()]
	if ei == nil {
		ei = &eqIndex{path: path, byValue: map[string]groupSet{}}
		si.eq[path.String()] = ei
	}
	for _, key := range keys {
		if ei.byValue[key] == nil {
			ei.byValue[key] = groupSet{}
		}
		ei.byValue[key][g] = struct{}{}
	}
}

// remove unregisters a target, and its group once it has no target left.
func (x *targetIndex) remove(t *listenTarget) {
	x.mu.Lock()
	defer x.mu.Unlock()
	g := t.group
	if g == nil || x.byKey[g.key] != g {
		return
	}
	delete(g.targets, t)
	if len(g.targets) > 0 {
		return
	}
	delete(x.byKey, g.key)
	if g.pipeline != nil {
		k := pipeKey(g.database, g.scope)
		delete(x.pipes[k], g)
		if len(x.pipes[k]) == 0 {
			delete(x.pipes, k)
		}
		return
	}
	if g.plan == nil {
		for _, p := range g.paths {
			k := g.database + "\x00" + p
			delete(x.docs[k], g)
			if len(x.docs[k]) == 0 {
				delete(x.docs, k)
			}
		}
		return
	}
	m, k := x.bucket(g)
	si := m[k]
	if si == nil {
		return
	}
	delete(si.any, g)
	if path, keys, ok := indexedEquality(g.plan.query); ok {
		if ei := si.eq[path.String()]; ei != nil {
			for _, key := range keys {
				delete(ei.byValue[key], g)
				if len(ei.byValue[key]) == 0 {
					delete(ei.byValue, key)
				}
			}
			if len(ei.byValue) == 0 {
				delete(si.eq, path.String())
			}
		}
	}
	if len(si.any) == 0 && len(si.eq) == 0 {
		delete(m, k)
	}
}

// forget drops a closed stream from the streams RecheckListeners visits.
func (x *targetIndex) forget(s *ListenStream) {
	x.mu.Lock()
	delete(x.streams, s)
	x.mu.Unlock()
}

// eachStream calls f with every stream that had a target.
func (x *targetIndex) eachStream(f func(*ListenStream)) {
	x.mu.RLock()
	streams := make([]*ListenStream, 0, len(x.streams))
	for s := range x.streams {
		streams = append(streams, s)
	}
	x.mu.RUnlock()
	for _, s := range streams {
		f(s)
	}
}

// publish appends the paths a commit may have changed to the log of every
// group they may affect, and then signals those groups' streams once. It
// runs on the pipeline's goroutine, in commit order.
func (x *targetIndex) publish(c Commit) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.streams) == 0 {
		return
	}
	var touched []*targetGroup
	touch := func(g *targetGroup, path string) {
		g.appendPath(path)
		if !slices.Contains(touched, g) {
			touched = append(touched, g)
		}
	}
	for _, ch := range c.Changes {
		for g := range x.docs[ch.Database+"\x00"+ch.Path] {
			touch(g, ch.Path)
		}
		slash := strings.LastIndexByte(ch.Path, '/')
		if slash < 0 {
			continue
		}
		collPath := ch.Path[:slash]
		id := collPath[strings.LastIndexByte(collPath, '/')+1:]
		if len(x.pipes) > 0 {
			for _, scope := range []PipelineScope{{}, {Collection: collPath}, {Collection: id, Group: true}} {
				for g := range x.pipes[pipeKey(ch.Database, scope)] {
					touch(g, ch.Path)
				}
			}
		}
		x.colls[ch.Database+"\x00"+collPath].route(ch, touch)
		if len(x.groups) > 0 {
			x.groups[ch.Database+"\x00"+id].route(ch, touch)
			x.groups[ch.Database+"\x00"].route(ch, touch)
		}
	}
	for _, g := range touched {
		g.signal()
	}
}

// pipeKey is where the index keeps the pipeline targets of database that
// read scope.
func pipeKey(database string, scope PipelineScope) string {
	switch {
	case scope.Collection == "":
		return database + "\x00"
	case scope.Group:
		return database + "\x00g" + scope.Collection
	}
	return database + "\x00c" + scope.Collection
}

// route offers a change to the query groups of si it may affect: those
// whose filter the document passes before or after it.
func (si *shapeIndex) route(ch Change, touch func(*targetGroup, string)) {
	if si == nil {
		return
	}
	for g := range si.any {
		g.offer(ch, touch)
	}
	for _, ei := range si.eq {
		var seen string
		for i, doc := range []*pb.Document{ch.Old, ch.New} {
			v, ok := GetField(doc.GetFields(), ei.path)
			if !ok {
				continue
			}
			key, ok := eqKey(v)
			if !ok || (i == 1 && key == seen) {
				continue
			}
			seen = key
			for g := range ei.byValue[key] {
				g.offer(ch, touch)
			}
		}
	}
}

// offer touches a query group with a change when the document is in the
// query's scope and passes its filter before or after the change.
func (g *targetGroup) offer(ch Change, touch func(*targetGroup, string)) {
	if inScope(ch.Path, g.prefix, g.plan.collection, g.plan.descendants) && (g.plan.matches(ch.Old) || g.plan.matches(ch.New)) {
		touch(g, ch.Path)
	}
}
