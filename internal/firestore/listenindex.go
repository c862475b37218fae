package firestore

import (
	"math"
	"strconv"
	"strings"
	"sync"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// targetIndex finds the listen targets a document change may affect without
// visiting the others: document targets by the paths they name; query
// targets by the collection they read (a collection group's by its id), and
// within it by the value of an equality (or IN) filter on a field when they
// have one, so that a commit to a collection many users each watch a slice
// of reaches only the streams of the slices it touches.
//
// Every published commit goes through publish, which tells each affected
// target's stream which paths changed; the stream works out the rest. The
// index holds no documents.
type targetIndex struct {
	mu      sync.RWMutex
	docs    map[string]targetSet       // database "\x00" document path → document targets
	colls   map[string]*shapeIndex     // database "\x00" collection path → queries of that collection
	groups  map[string]*shapeIndex     // database "\x00" collection id ("" for every id) → collection-group queries
	pipes   map[string]targetSet       // pipeKey → pipeline targets, changed by any commit in their scope
	streams map[*ListenStream]struct{} // streams with targets, for RecheckListeners
}

type targetSet map[*listenTarget]struct{}

// shapeIndex holds the queries of one collection (or collection group):
// those with an indexable equality filter by its field and value key, the
// rest in any.
type shapeIndex struct {
	any targetSet
	eq  map[string]*eqIndex // by field path
}

type eqIndex struct {
	path    FieldPath
	byValue map[string]targetSet
}

func newTargetIndex() *targetIndex {
	return &targetIndex{docs: map[string]targetSet{}, colls: map[string]*shapeIndex{}, groups: map[string]*shapeIndex{}, pipes: map[string]targetSet{}, streams: map[*ListenStream]struct{}{}}
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

// bucket returns the key of the shape index a query target lives in, and
// which map holds it.
func (x *targetIndex) bucket(t *listenTarget) (map[string]*shapeIndex, string) {
	if t.plan.descendants {
		return x.groups, t.database + "\x00" + t.plan.collection
	}
	return x.colls, t.database + "\x00" + t.prefix + t.plan.collection
}

// add registers a target; from then on publish reports its changes.
func (x *targetIndex) add(t *listenTarget) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.streams[t.s] = struct{}{}
	if t.pipeline != nil {
		k := pipeKey(t.database, t.scope)
		if x.pipes[k] == nil {
			x.pipes[k] = targetSet{}
		}
		x.pipes[k][t] = struct{}{}
		return
	}
	if t.plan == nil {
		for _, p := range t.paths {
			k := t.database + "\x00" + p
			if x.docs[k] == nil {
				x.docs[k] = targetSet{}
			}
			x.docs[k][t] = struct{}{}
		}
		return
	}
	m, k := x.bucket(t)
	si := m[k]
	if si == nil {
		si = &shapeIndex{any: targetSet{}, eq: map[string]*eqIndex{}}
		m[k] = si
	}
	path, keys, ok := indexedEquality(t.plan.query)
	if !ok {
		si.any[t] = struct{}{}
		return
	}
	ei := si.eq[path.String()]
	if ei == nil {
		ei = &eqIndex{path: path, byValue: map[string]targetSet{}}
		si.eq[path.String()] = ei
	}
	for _, key := range keys {
		if ei.byValue[key] == nil {
			ei.byValue[key] = targetSet{}
		}
		ei.byValue[key][t] = struct{}{}
	}
}

// remove unregisters a target.
func (x *targetIndex) remove(t *listenTarget) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if t.pipeline != nil {
		k := pipeKey(t.database, t.scope)
		delete(x.pipes[k], t)
		if len(x.pipes[k]) == 0 {
			delete(x.pipes, k)
		}
		return
	}
	if t.plan == nil {
		for _, p := range t.paths {
			k := t.database + "\x00" + p
			delete(x.docs[k], t)
			if len(x.docs[k]) == 0 {
				delete(x.docs, k)
			}
		}
		return
	}
	m, k := x.bucket(t)
	si := m[k]
	if si == nil {
		return
	}
	delete(si.any, t)
	if path, keys, ok := indexedEquality(t.plan.query); ok {
		if ei := si.eq[path.String()]; ei != nil {
			for _, key := range keys {
				delete(ei.byValue[key], t)
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

// publish tells the stream of every target a commit may change which of
// its paths changed. It runs on the pipeline's goroutine, in commit order.
func (x *targetIndex) publish(c Commit) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.streams) == 0 {
		return
	}
	for _, ch := range c.Changes {
		for t := range x.docs[ch.Database+"\x00"+ch.Path] {
			t.s.changed(t, ch.Path)
		}
		slash := strings.LastIndexByte(ch.Path, '/')
		if slash < 0 {
			continue
		}
		collPath := ch.Path[:slash]
		id := collPath[strings.LastIndexByte(collPath, '/')+1:]
		if len(x.pipes) > 0 {
			for _, scope := range []PipelineScope{{}, {Collection: collPath}, {Collection: id, Group: true}} {
				for t := range x.pipes[pipeKey(ch.Database, scope)] {
					t.s.changed(t, ch.Path)
				}
			}
		}
		if si := x.colls[ch.Database+"\x00"+collPath]; si != nil {
			si.route(ch)
		}
		if len(x.groups) > 0 {
			if si := x.groups[ch.Database+"\x00"+id]; si != nil {
				si.route(ch)
			}
			if si := x.groups[ch.Database+"\x00"]; si != nil {
				si.route(ch)
			}
		}
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

// route reports a change to the queries of si it may affect: those whose
// filter the document passes before or after it.
func (si *shapeIndex) route(ch Change) {
	if si == nil {
		return
	}
	for t := range si.any {
		t.offer(ch)
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
			for t := range ei.byValue[key] {
				t.offer(ch)
			}
		}
	}
}

// offer reports a change to a query target's stream when the document is in
// the query's scope and passes its filter before or after the change.
func (t *listenTarget) offer(ch Change) {
	if inScope(ch.Path, t.prefix, t.plan.collection, t.plan.descendants) && (t.plan.matches(ch.Old) || t.plan.matches(ch.New)) {
		t.s.changed(t, ch.Path)
	}
}
