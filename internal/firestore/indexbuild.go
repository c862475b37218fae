package firestore

import (
	"slices"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// indexLookup returns the index for spec; the planner reads indexes through it.
type indexLookup func(spec indexSpec, path FieldPath) *fieldIndex

// indexBuild is an index being built without the engine lock held: the
// changes committed meanwhile to the documents it covers are recorded, to
// be applied when it is installed.
type indexBuild struct {
	ix      *fieldIndex
	changes []indexChange
	done    chan struct{}
}

// indexChange is one document change, from old to doc (nil: absent).
type indexChange struct {
	path     string
	old, doc *pb.Document
}

// fill inserts rows into the index's tree. They need not be sorted: the
// tree orders them at the same cost, which sorting first would only add to.
func (ix *fieldIndex) fill(rows []indexEntry) {
	for _, en := range rows {
		ix.tree.ReplaceOrInsert(en)
	}
}

// duringIndexBuild, when set (by tests), runs while an index is built
// without the lock.
var duringIndexBuild func()

// maxIndexRounds bounds how often ensureIndexes plans again after building:
// each round builds what the planner reached, which may lead it further.
const maxIndexRounds = 4

// ensureIndexes builds the indexes a query of p will read, holding no engine
// lock while it reads the documents and fills the tree, so that a first
// query over a large collection does not hold up writers for the seconds
// that takes. e.mu must not be held.
func (e *Engine) ensureIndexes(p *plan) {
	for range maxIndexRounds {
		e.mu.RLock()
		d := e.dbs[p.parent.Database]
		var missing []scan
		if d != nil {
			missing = e.missingIndexes(d, p)
		}
		e.mu.RUnlock()
		if len(missing) == 0 {
			return
		}
		for _, s := range missing {
			e.buildIndex(p.parent.Database, s.spec, s.path)
		}
	}
}

// missingIndexes plans p and returns the indexes it reached that are not
// built; for the plan, a missing index reads as empty. e.mu is held.
func (e *Engine) missingIndexes(d *database, p *plan) []scan {
	var missing []scan
	lookup := func(spec indexSpec, path FieldPath) *fieldIndex {
		if ix := e.builtIndex(d, spec); ix != nil {
			return ix
		}
		for _, m := range missing {
			if m.spec == spec {
				return newFieldIndex(spec, path)
			}
		}
		missing = append(missing, scan{spec: spec, path: path})
		return newFieldIndex(spec, path)
	}
	for _, leaf := range choose(p, lookup).leaves() {
		lookup(leaf.spec, leaf.path)
	}
	return missing
}

// rowsPerLock is how many documents buildIndex reads under one hold of the
// read lock before it lets waiting writers in (a variable for tests).
var rowsPerLock = 4096

// buildIndex builds and installs the index for spec unless it is built; if
// another goroutine is building it, it waits for that build. It reads the
// documents' rows under the read lock, released every rowsPerLock
// documents; fills the tree with no lock held; and installs
// the index under the write lock after applying the changes committed
// since it began (a document read after it changed gets its rows again
// from the change, to the same effect). e.mu must not be held.
func (e *Engine) buildIndex(database string, spec indexSpec, path FieldPath) {
	e.mu.RLock()
	d := e.dbs[database]
	if d == nil {
		e.mu.RUnlock()
		return
	}
	e.ixMu.Lock()
	if d.indexes[spec.group][spec] != nil {
		e.ixMu.Unlock()
		e.mu.RUnlock()
		return
	}
	if b := d.building[spec]; b != nil {
		e.ixMu.Unlock()
		e.mu.RUnlock()
		<-b.done
		return
	}
	b := &indexBuild{ix: newFieldIndex(spec, path), done: make(chan struct{})}
	defer close(b.done)
	if d.building == nil {
		d.building = map[indexSpec]*indexBuild{}
	}
	d.building[spec] = b
	e.ixMu.Unlock()
	rows := make([]indexEntry, 0, len(d.docs)) // one row a document, but for arrays
	read := 0
	// Go defines ranging over a map changed between iterations: an entry is
	// produced at most once, with its value at the time it is reached.
	for p, doc := range d.docs {
		rows = append(rows, b.ix.entries(p, doc)...)
		if read++; read%rowsPerLock == 0 {
			e.mu.RUnlock()
			if duringIndexBuild != nil {
				duringIndexBuild()
			}
			e.mu.RLock()
		}
	}
	e.mu.RUnlock()
	if duringIndexBuild != nil {
		duringIndexBuild()
	}

	b.ix.fill(rows)

	e.mu.Lock()
	defer e.mu.Unlock()
	if d.building[spec] != b {
		return // the database was cleared meanwhile
	}
	delete(d.building, spec)
	for _, ch := range b.changes {
		b.ix.update(ch.path, ch.old, ch.doc)
	}
	if d.indexes[spec.group][spec] == nil { // not built under a lock meanwhile
		d.install(b.ix)
	}
}

// buildingCollectionIndex reports whether database's collection-order
// index is being built.
func (e *Engine) buildingCollectionIndex(database string) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	e.ixMu.Lock()
	defer e.ixMu.Unlock()
	d := e.dbs[database]
	return d != nil && d.building[byCollection] != nil
}

// builtIndex returns the index for spec if it is built; e.mu is held.
func (e *Engine) builtIndex(d *database, spec indexSpec) *fieldIndex {
	e.ixMu.Lock()
	defer e.ixMu.Unlock()
	return d.indexes[spec.group][spec]
}

// index returns the index for spec, building it from the documents on first
// use; e.mu is held (for reading or writing). Queries build their indexes
// beforehand with ensureIndexes, which holds no lock while it reads the
// documents; this builds one a query finds missing all the same (e.g. after
// the database was cleared meanwhile).
func (e *Engine) index(d *database, spec indexSpec, path FieldPath) *fieldIndex {
	e.ixMu.Lock()
	defer e.ixMu.Unlock()
	if ix := d.indexes[spec.group][spec]; ix != nil {
		return ix
	}
	ix := d.build(spec, path)
	d.install(ix)
	return ix
}

// build returns the index for spec over the database's documents; the
// caller holds what keeps them from changing.
func (d *database) build(spec indexSpec, path FieldPath) *fieldIndex {
	ix := newFieldIndex(spec, path)
	rows := make([]indexEntry, 0, len(d.docs)) // one row a document, but for arrays
	for p, doc := range d.docs {
		rows = append(rows, ix.entries(p, doc)...)
	}
	ix.fill(rows)
	return ix
}

// indexesOf looks indexes of d up with index; e.mu is held.
func (e *Engine) indexesOf(d *database) indexLookup {
	return func(spec indexSpec, path FieldPath) *fieldIndex { return e.index(d, spec, path) }
}

// install registers a built index; e.mu is held for writing, or for
// reading together with e.ixMu.
func (d *database) install(ix *fieldIndex) {
	if d.indexes == nil {
		d.indexes = map[string]map[indexSpec]*fieldIndex{}
	}
	if d.indexes[ix.spec.group] == nil {
		d.indexes[ix.spec.group] = map[indexSpec]*fieldIndex{}
	}
	d.indexes[ix.spec.group][ix.spec] = ix
}

// BuildIndexes builds, in every database present, the collection-order
// index (which a data folder opens without), then the indexes the engine
// reads for the queries each declared index serves (equalities on its
// leading fields, ordered by its last) and the vector indexes, so that
// first queries need not build them. It returns when done; a second call
// waits for the first.
func (e *Engine) BuildIndexes() {
	pol := &e.indexPolicy
	pol.mu.Lock()
	if pol.built != nil {
		done := pol.built
		pol.mu.Unlock()
		<-done
		return
	}
	pol.built = make(chan struct{})
	declared := pol.declared
	pol.mu.Unlock()
	defer close(pol.built)
	e.mu.RLock()
	var dbs []string
	for name := range e.dbs {
		dbs = append(dbs, name)
	}
	e.mu.RUnlock()
	for _, db := range dbs {
		e.buildIndex(db, byCollection, nil)
	}
	for _, db := range dbs {
		id := SplitDatabase(db).ID
		for _, d := range declared[id] {
			p, err := planQuery(db+"/documents", representativeQuery(d))
			if err != nil {
				continue
			}
			if p.nearest != nil {
				e.mu.RLock()
				if dd := e.dbs[db]; dd != nil {
					e.vectorIndex(dd, vectorKey{group: p.collection, field: p.nearest.field.String()}, p.nearest.field)
				}
				e.mu.RUnlock()
				continue
			}
			e.ensureIndexes(p)
		}
	}
}

// representativeQuery is a query a declared index serves: equalities (or
// array-contains) on every field but the last, ordered by the last, or a
// vector search on it.
func representativeQuery(d IndexDef) *pb.StructuredQuery {
	q := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: d.CollectionGroup, AllDescendants: d.QueryScope == ScopeCollectionGroup}}}
	fields := trimName(d.Fields)
	var filters []*pb.StructuredQuery_Filter
	for _, f := range fields[:len(fields)-1] {
		op := pb.StructuredQuery_FieldFilter_EQUAL
		if f.ArrayConfig != "" {
			op = pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS
		}
		filters = append(filters, &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
			Field: &pb.StructuredQuery_FieldReference{FieldPath: f.FieldPath}, Op: op, Value: nullValue(),
		}}})
	}
	if len(filters) > 0 {
		q.Where = &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_CompositeFilter{CompositeFilter: &pb.StructuredQuery_CompositeFilter{
			Op: pb.StructuredQuery_CompositeFilter_AND, Filters: filters,
		}}}
	}
	last := fields[len(fields)-1]
	switch {
	case last.VectorConfig != nil:
		q.FindNearest = &pb.StructuredQuery_FindNearest{
			VectorField:     &pb.StructuredQuery_FieldReference{FieldPath: last.FieldPath},
			QueryVector:     vectorOf(slices.Repeat([]*pb.Value{doubleValue(1)}, last.VectorConfig.Dimension)),
			DistanceMeasure: pb.StructuredQuery_FindNearest_EUCLIDEAN,
			Limit:           wrapperspb.Int32(1),
		}
	case last.Order != "":
		dir := pb.StructuredQuery_ASCENDING
		if last.Order == "DESCENDING" {
			dir = pb.StructuredQuery_DESCENDING
		}
		q.OrderBy = []*pb.StructuredQuery_Order{{Field: &pb.StructuredQuery_FieldReference{FieldPath: last.FieldPath}, Direction: dir}}
	}
	return q
}
