package firestore

import (
	"math"
	"slices"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/google/btree"
)

// indexSpec names one index over the documents of every collection with id
// group ("" for every document of the database): a single-field index
// orders them by a field's value and then by name (or by name alone); with
// a prefix field, by the prefix field's value first, which serves an
// equality filter on it ordered by the other field. A scoped index orders
// them by their collection's path before all that, so that a query of one
// collection reads only its rows, not those of same-named collections
// under other documents; collection group queries read unscoped indexes.
type indexSpec struct {
	group    string
	field    string // FieldPath.String(); "" orders by name alone
	contains bool   // array-contains: one entry per distinct array element
	prefix   string // FieldPath.String() of the equality field; "" for none
	scoped   bool
}

// byCollection is the index of every document of a database by its
// collection's path, then by name: what reading a collection in name order,
// counting it, listing collection ids and listing documents read. Every
// database keeps it from its first write on; BuildIndexes builds it for
// the databases of an opened data folder.
var byCollection = indexSpec{scoped: true}

// fieldIndex is a built index. Its tree is changed only under the engine's
// write lock, so readers holding the read lock see a stable tree.
type fieldIndex struct {
	spec       indexSpec
	path       FieldPath
	prefixPath FieldPath
	tree       *btree.BTreeG[indexEntry]
}

// indexEntry is one index row: the document's path and the indexed values
// inside it, so an index costs a few words per document and does not keep
// the rest of a document decoded from the data folder alive.
type indexEntry struct {
	prefix *pb.Value // nil without a prefix field
	value  *pb.Value // nil in a name index
	path   string    // under documents/
	seek   seekBound // set only in the bounds a scan seeks to
	coll   int32     // path[:coll] is the path of the document's collection
}

// seekBound places a seek bound before or after every path of its values.
type seekBound int8

const (
	seekFirst seekBound = iota - 1
	atPath
	seekLast
)

// valueLast is a value after every value (nil sorts with null, before every value).
var valueLast = &pb.Value{}

// less orders the rows of the index.
func (ix *fieldIndex) less(a, b indexEntry) bool {
	if ix.spec.scoped {
		if ca, cb := a.collection(), b.collection(); ca != cb {
			return compareReferences(ca, cb) < 0
		}
	}
	return lessEntry(a, b)
}

// collection returns the path of the collection of the row's document.
func (en indexEntry) collection() string { return en.path[:en.coll] }

// rowOf returns a row of the document at path with the indexed values.
func rowOf(path string, prefix, value *pb.Value) indexEntry {
	return indexEntry{prefix: prefix, value: value, path: path, coll: int32(max(strings.LastIndexByte(path, '/'), 0))}
}

func lessEntry(a, b indexEntry) bool {
	if c := compareIndexValues(a.prefix, b.prefix); c != 0 {
		return c < 0
	}
	if c := compareIndexValues(a.value, b.value); c != 0 {
		return c < 0
	}
	if a.seek != b.seek {
		return a.seek < b.seek
	}
	return compareReferences(a.path, b.path) < 0
}

func compareIndexValues(a, b *pb.Value) int {
	switch {
	case a == b:
		return 0
	case a == valueLast:
		return 1
	case b == valueLast:
		return -1
	}
	return Compare(a, b)
}

// groupOf returns the collection id of the document at path.
func groupOf(path string) string {
	end := strings.LastIndexByte(path, '/')
	if end < 0 {
		return ""
	}
	return path[strings.LastIndexByte(path[:end], '/')+1 : end]
}

// entries returns the rows in ix of the document at path (none when the
// index does not cover its collection).
func (ix *fieldIndex) entries(path string, doc storedDoc) []indexEntry {
	if doc.doc == nil && doc.encoded == nil || ix.spec.group != "" && groupOf(path) != ix.spec.group {
		return nil
	}
	if ix.spec.field == "" {
		return []indexEntry{rowOf(path, nil, nil)}
	}
	v, ok := doc.field(ix.path)
	if !ok {
		return nil
	}
	if ix.prefixPath != nil {
		pv, ok := doc.field(ix.prefixPath)
		if !ok {
			return nil
		}
		return []indexEntry{rowOf(path, pv, v)}
	}
	if !ix.spec.contains {
		return []indexEntry{rowOf(path, nil, v)}
	}
	elems := v.GetArrayValue().GetValues()
	out := make([]indexEntry, len(elems))
	for i, el := range elems {
		out[i] = rowOf(path, nil, el)
	}
	return out
}

// update moves the rows of the document at path from its old to its new
// version (a name index's row stays while the document exists).
func (ix *fieldIndex) update(path string, old, doc *pb.Document) {
	if ix.spec.field == "" && (old == nil) == (doc == nil) {
		return
	}
	for _, en := range ix.entries(path, storedDoc{doc: old}) {
		ix.tree.Delete(en)
	}
	for _, en := range ix.entries(path, storedDoc{doc: doc}) {
		ix.tree.ReplaceOrInsert(en)
	}
}

// reindex keeps the database's built indexes, and those being built, in
// step with one document change; e.mu is held for writing.
func (d *database) reindex(path string, old, doc *pb.Document) {
	d.reindexVectors(path, doc)
	if len(d.indexes) == 0 && len(d.building) == 0 {
		return
	}
	g := groupOf(path)
	for _, ix := range d.indexes[g] {
		ix.update(path, old, doc)
	}
	for _, ix := range d.indexes[""] {
		ix.update(path, old, doc)
	}
	for spec, b := range d.building {
		if spec.group == "" || spec.group == g {
			b.changes = append(b.changes, indexChange{path, old, doc})
		}
	}
}

func newFieldIndex(spec indexSpec, path FieldPath) *fieldIndex {
	ix := &fieldIndex{spec: spec, path: path}
	ix.tree = btree.NewG(32, ix.less)
	if spec.prefix != "" {
		ix.prefixPath, _ = ParseFieldPath(spec.prefix)
	}
	return ix
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

// scan is the access path the planner picks: one index, read in one
// direction from a seek bound, stopping past the other; or a union of such
// scans.
type scan struct {
	spec   indexSpec
	scope  string // with spec.scoped, the path of the collection read
	path   FieldPath
	prefix *pb.Value // the prefix field's value, with spec.prefix
	lo, hi *pb.Value // inclusive value bounds; nil: open
	// parts, when set, make the scan the union of theirs, each path visited
	// once: one single-value range per value of an in or
	// array-contains-any, or one range per disjunct of an or.
	parts []scan
	// loName and hiName bound a scan of a name index: the paths (under
	// documents/) it starts and stops at, inclusive; "" is open.
	loName, hiName string
	desc           bool
	// sorted is how many leading orders of the plan the rows arrive sorted
	// by: 0 (collect everything, then sort), 1, or all of them.
	sorted int
	stats  *scanStats // counts the rows read, when explaining; else nil
}

// run visits the document paths of the scan's rows in order until visit
// returns false.
func (s scan) run(index indexLookup, visit func(path string) bool) {
	if s.parts != nil {
		s.runUnion(index, visit)
		return
	}
	ix := index(s.spec, s.path)
	step := func(en indexEntry) bool {
		if s.spec.scoped && en.collection() != s.scope {
			return false
		}
		if s.prefix != nil && Compare(en.prefix, s.prefix) != 0 {
			return false
		}
		if s.desc {
			if s.lo != nil && Compare(en.value, s.lo) < 0 {
				return false
			}
		} else if s.hi != nil && Compare(en.value, s.hi) > 0 {
			return false
		}
		if s.desc {
			if s.loName != "" && compareReferences(en.path, s.loName) < 0 {
				return false
			}
		} else if s.hiName != "" && compareReferences(en.path, s.hiName) > 0 {
			return false
		}
		if s.stats != nil {
			s.stats.entries++
		}
		return visit(en.path)
	}
	bound := func(v *pb.Value, seek seekBound) indexEntry {
		return indexEntry{prefix: s.prefix, value: v, seek: seek, path: s.scope, coll: int32(len(s.scope))}
	}
	seeks := s.prefix != nil || s.spec.scoped
	switch {
	case s.desc && s.hiName != "":
		ix.tree.DescendLessOrEqual(rowOf(s.hiName, nil, nil), step)
	case !s.desc && s.loName != "":
		ix.tree.AscendGreaterOrEqual(rowOf(s.loName, nil, nil), step)
	case s.desc && (s.hi != nil || seeks):
		hi := s.hi
		if hi == nil {
			hi = valueLast
		}
		ix.tree.DescendLessOrEqual(bound(hi, seekLast), step)
	case s.desc:
		ix.tree.Descend(step)
	case s.lo != nil || seeks:
		ix.tree.AscendGreaterOrEqual(bound(s.lo, seekFirst), step)
	default:
		ix.tree.Ascend(step)
	}
}

// runUnion visits the rows of each part in turn, each path once.
func (s scan) runUnion(index indexLookup, visit func(path string) bool) {
	seen := map[string]bool{}
	going := true
	for _, part := range s.parts {
		part.stats = s.stats
		part.run(index, func(path string) bool {
			if seen[path] {
				return true
			}
			seen[path] = true
			going = visit(path)
			return going
		})
		if !going {
			return
		}
	}
}

// leaves returns the single-range scans a scan reads.
func (s scan) leaves() []scan {
	if s.parts == nil {
		return []scan{s}
	}
	var out []scan
	for _, part := range s.parts {
		out = append(out, part.leaves()...)
	}
	return out
}

// disjunctions returns the ors every result must pass: the filter itself or
// members of its (nested) AND.
func disjunctions(f *pb.StructuredQuery_Filter) []*pb.StructuredQuery_CompositeFilter {
	c := f.GetCompositeFilter()
	switch c.GetOp() {
	case pb.StructuredQuery_CompositeFilter_OR:
		return []*pb.StructuredQuery_CompositeFilter{c}
	case pb.StructuredQuery_CompositeFilter_AND:
		var out []*pb.StructuredQuery_CompositeFilter
		for _, sub := range c.GetFilters() {
			out = append(out, disjunctions(sub)...)
		}
		return out
	}
	return nil
}

// conjuncts returns the field filters every result must pass: the filter
// itself or the members of its (nested) AND.
func conjuncts(f *pb.StructuredQuery_Filter) []*pb.StructuredQuery_FieldFilter {
	switch x := f.GetFilterType().(type) {
	case *pb.StructuredQuery_Filter_FieldFilter:
		return []*pb.StructuredQuery_FieldFilter{x.FieldFilter}
	case *pb.StructuredQuery_Filter_CompositeFilter:
		if x.CompositeFilter.GetOp() != pb.StructuredQuery_CompositeFilter_AND {
			return nil
		}
		var out []*pb.StructuredQuery_FieldFilter
		for _, sub := range x.CompositeFilter.GetFilters() {
			out = append(out, conjuncts(sub)...)
		}
		return out
	}
	return nil
}

func isName(path FieldPath) bool { return len(path) == 1 && path[0] == "__name__" }

// choose plans how to read a query: stream the index of its first order
// (seeking to the bounds its filters and cursors give) so that a limit stops
// the read early, prefixed by the value of an equality filter on another
// field when there is one; or read the single-value ranges of an
// array-contains, an in, an array-contains-any or an or of equalities when
// those are the smaller read. e.mu is held.
func choose(p *plan, index indexLookup) scan {
	group := p.collection
	scoped, scope := !p.descendants, strings.Join(append(slices.Clip(p.parent.Path), p.collection), "/")
	lead := p.orders[0]
	base := scan{spec: indexSpec{group: group, scoped: scoped}, scope: scope, desc: lead.desc}
	points, unions := base.points(p.query.GetWhere())
	for _, or := range disjunctions(p.query.GetWhere()) {
		if u, ok := base.union(or); ok {
			unions = append(unions, u)
		}
	}
	s := base
	if isName(lead.path) {
		if len(points) > 0 {
			s := points[0]
			s.sorted = len(p.orders)
			return s
		}
		if scoped {
			s.spec = byCollection
		}
		s.boundByName(p, lead)
		s.sorted = len(p.orders)
	} else {
		s.spec.field, s.path, s.sorted = lead.path.String(), lead.path, 1
		if len(p.orders) == 2 {
			s.sorted = 2 // (field, name) is the index's own order
		}
		s.boundBy(p, lead)
		for _, pt := range points {
			if !pt.spec.contains && pt.spec.field != s.spec.field {
				s.spec.prefix, s.prefix = pt.spec.field, pt.lo
				return s
			}
		}
	}
	points = append(points, unions...)
	if len(points) == 0 {
		return s
	}
	need := windowSize(p.query)
	if need < 0 {
		return points[0] // everything is read anyway: read the fewest rows
	}
	// Streaming reads about need/selectivity rows; a point range reads all
	// of its rows. Count the smallest point range up to the break-even size.
	budget := int(math.Sqrt(float64(need+1)*float64(index(s.spec, s.path).tree.Len()))) + 1
	for _, pt := range points {
		rows := 0
		pt.run(index, func(string) bool { rows++; return rows < budget })
		if rows < budget {
			return pt
		}
	}
	return s
}

// points returns the ranges of index rows that hold every document passing
// the field filters f's results must all pass: single-value ranges of
// equalities and array-contains, in name order; and unions of them for in
// and array-contains-any. base gives the index's group and scope.
func (base scan) points(f *pb.StructuredQuery_Filter) (points, unions []scan) {
	for _, ff := range conjuncts(f) {
		path, _ := ParseFieldPath(ff.GetField().GetFieldPath())
		if isName(path) {
			continue
		}
		pt := base
		pt.spec.field, pt.path = path.String(), path
		switch ff.GetOp() {
		case pb.StructuredQuery_FieldFilter_EQUAL, pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS:
			pt.spec.contains = ff.GetOp() == pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS
			pt.lo, pt.hi = ff.GetValue(), ff.GetValue()
			points = append(points, pt)
		case pb.StructuredQuery_FieldFilter_IN, pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY:
			pt.spec.contains = ff.GetOp() == pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY
			u := base
			for _, v := range distinctValues(ff.GetValue().GetArrayValue().GetValues()) {
				one := pt
				one.lo, one.hi = v, v
				u.parts = append(u.parts, one)
			}
			if u.parts == nil {
				u.parts = []scan{} // an empty in: nothing to read
			}
			unions = append(unions, u)
		}
	}
	return points, unions
}

// union returns the union of one range per member of or, when each member
// has one.
func (base scan) union(or *pb.StructuredQuery_CompositeFilter) (scan, bool) {
	if len(or.GetFilters()) == 0 {
		return scan{}, false
	}
	u := base
	u.parts = []scan{}
	for _, member := range or.GetFilters() {
		points, unions := base.points(member)
		switch {
		case len(points) > 0:
			u.parts = append(u.parts, points[0])
		case len(unions) > 0:
			u.parts = append(u.parts, unions[0].parts...)
		default:
			return scan{}, false
		}
	}
	return u, true
}

// distinctValues returns values sorted, without repeats (1 and 1.0 are one
// value to an equality).
func distinctValues(values []*pb.Value) []*pb.Value {
	out := slices.SortedFunc(slices.Values(values), Compare)
	return slices.CompactFunc(out, func(a, b *pb.Value) bool { return Compare(a, b) == 0 })
}

// boundBy narrows a scan of the lead order's index with the filters on that
// field and the cursors' first values.
func (s *scan) boundBy(p *plan, lead order) {
	eachBound(p, lead, func(v *pb.Value, lower bool) {
		if lower && (s.lo == nil || Compare(v, s.lo) > 0) {
			s.lo = v
		}
		if !lower && (s.hi == nil || Compare(v, s.hi) < 0) {
			s.hi = v
		}
	})
}

// boundByName narrows a scan of a name index with the filters on __name__
// and the cursors' first values that name documents it can hold (in a
// scoped scan, documents of the collection read).
func (s *scan) boundByName(p *plan, lead order) {
	eachBound(p, lead, func(v *pb.Value, lower bool) {
		n, err := ParseName(v.GetReferenceValue())
		if err != nil || n.Database != p.parent.Database {
			return
		}
		path := strings.Join(n.Path, "/")
		if s.spec.scoped && rowOf(path, nil, nil).collection() != s.scope {
			return
		}
		if lower && (s.loName == "" || compareReferences(path, s.loName) > 0) {
			s.loName = path
		}
		if !lower && (s.hiName == "" || compareReferences(path, s.hiName) < 0) {
			s.hiName = path
		}
	})
}

// eachBound calls bound with each inclusive bound the query's filters on
// the lead order's field and its cursors' first values put on that field,
// lower or upper (a strict bound is given as inclusive: the filters and
// cursors still apply to the rows read).
func eachBound(p *plan, lead order, bound func(v *pb.Value, lower bool)) {
	key := lead.path.String()
	for _, ff := range conjuncts(p.query.GetWhere()) {
		if path, _ := ParseFieldPath(ff.GetField().GetFieldPath()); path.String() != key {
			continue
		}
		switch ff.GetOp() {
		case pb.StructuredQuery_FieldFilter_EQUAL:
			bound(ff.GetValue(), true)
			bound(ff.GetValue(), false)
		case pb.StructuredQuery_FieldFilter_GREATER_THAN, pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL:
			bound(ff.GetValue(), true)
		case pb.StructuredQuery_FieldFilter_LESS_THAN, pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL:
			bound(ff.GetValue(), false)
		}
	}
	if c := p.query.GetStartAt(); len(c.GetValues()) > 0 {
		bound(c.GetValues()[0], !lead.desc)
	}
	if c := p.query.GetEndAt(); len(c.GetValues()) > 0 {
		bound(c.GetValues()[0], lead.desc)
	}
}

// windowSize is how many ordered results a query needs (offset + limit), or
// -1 without a limit.
func windowSize(q *pb.StructuredQuery) int {
	if q.GetLimit() == nil {
		return -1
	}
	return int(q.GetOffset()) + int(q.GetLimit().GetValue())
}
