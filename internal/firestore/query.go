package firestore

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
)

type consoleQueryKey struct{}

// ConsoleQuery marks ctx as a request of loupe's console: its queries
// still need their indexes, but are not recorded among the undeclared
// indexes queries needed (loupe indexes missing counts clients only).
func ConsoleQuery(ctx context.Context) context.Context {
	return context.WithValue(ctx, consoleQueryKey{}, true)
}

func isConsoleQuery(ctx context.Context) bool {
	v, _ := ctx.Value(consoleQueryKey{}).(bool)
	return v
}

// scanStats counts the index rows and documents an execution reads.
type scanStats struct {
	entries int64 // index rows in the ranges scanned, repeats of a union included
	docs    int64 // documents read to filter, order or return
}

// RunQuery runs a structured query whose parent is the database's documents
// root or a document, in the state c selects. Documents come back in query
// order, with the read time.
func (e *Engine) RunQuery(ctx context.Context, caller identity.Principal, parent string, q *pb.StructuredQuery, c Consistency) ([]*pb.Document, time.Time, error) {
	return e.query(ctx, caller, parent, q, c, nil)
}

// checkedPlan plans a query and checks that the caller may run it (rules)
// and that an index serves it; a console's query is not recorded as needed.
func (e *Engine) checkedPlan(ctx context.Context, caller identity.Principal, parent string, q *pb.StructuredQuery) (*plan, error) {
	p, err := planQuery(parent, q)
	if err != nil {
		return nil, err
	}
	p.unrecorded = isConsoleQuery(ctx)
	if err := e.check(ctx, caller, Access{Method: MethodList, Name: collectionName(p), Query: q}); err != nil {
		return nil, err
	}
	if err := e.checkIndexes(p); err != nil {
		return nil, err
	}
	return p, nil
}

// query runs a query as RunQuery does, counting what it reads in stats
// (nil: not counted).
func (e *Engine) query(ctx context.Context, caller identity.Principal, parent string, q *pb.StructuredQuery, c Consistency, stats *scanStats) ([]*pb.Document, time.Time, error) {
	p, err := e.checkedPlan(ctx, caller, parent, q)
	if err != nil {
		return nil, time.Time{}, err
	}
	p.stats = stats
	e.ensureIndexes(p)
	docs, readTime, err := e.runQuery(p, c)
	if err != nil || c.Transaction == nil {
		return docs, readTime, err
	}
	// A read-write transaction locks the documents it reads: lock the
	// results, then run the query again under the locks.
	for range 3 {
		names := make([]string, len(docs))
		for i, d := range docs {
			names[i] = d.Name
		}
		if err := e.lockReads(ctx, c, names); err != nil {
			return nil, time.Time{}, err
		}
		again, readTime, err := e.runQuery(p, c)
		if err != nil || sameNames(docs, again) {
			return again, readTime, err
		}
		docs = again
	}
	return docs, readTime, nil
}

// StreamQuery runs a query as RunQuery does but hands each result to
// visit as it is read, in RunQuery's order, instead of collecting them
// all: for a query with a filter and a projection at most (no orders,
// cursors, offset, limit or nearest-neighbour search), outside a
// transaction, when the index the planner picks yields the results in
// order. ok is false, having visited nothing, for any other query (the
// caller runs it with RunQuery). A projected query's documents hold at
// least the projection's fields (those its filter reads may be there
// too). visit runs under the engine's read lock, must not call the
// engine and must not change the document (it may be the stored one).
func (e *Engine) StreamQuery(ctx context.Context, caller identity.Principal, parent string, q *pb.StructuredQuery, c Consistency, visit func(*pb.Document)) (ok bool, err error) {
	if c.Transaction != nil || len(q.GetOrderBy()) > 0 || q.GetStartAt() != nil || q.GetEndAt() != nil || q.GetOffset() != 0 || q.GetLimit() != nil || q.GetFindNearest() != nil {
		return false, nil
	}
	p, err := e.checkedPlan(ctx, caller, parent, q)
	if err != nil {
		return false, err
	}
	e.ensureIndexes(p)
	defer e.lockFor(c)()
	_, at, err := e.readState(c)
	if err != nil {
		return false, err
	}
	d := e.dbs[p.parent.Database]
	if !e.latest(at) || d == nil {
		return false, nil
	}
	p.keep = decodeMask(p)
	index := e.indexesOf(d)
	s := choose(p, index)
	if s.sorted < len(p.orders) {
		return false, nil
	}
	w := newWindow(p, s.sorted)
	n := 0
	s.run(index, func(path string) bool {
		if n++; n%4096 == 0 && ctx.Err() != nil {
			return false
		}
		if !w.inScope(path) {
			return true
		}
		if doc := d.docs[path].decodeFields(path, p.keep); p.matches(doc) {
			visit(doc)
		}
		return true
	})
	if err := ctx.Err(); err != nil {
		return true, errorf(errs.Unavailable, "The query was cancelled: %v", err)
	}
	return true, nil
}

func sameNames(a, b []*pb.Document) bool {
	return slices.EqualFunc(a, b, func(x, y *pb.Document) bool { return x.Name == y.Name })
}

// runQuery runs a planned query in the state c selects, recording the
// results in c's transaction.
func (e *Engine) runQuery(p *plan, c Consistency) ([]*pb.Document, time.Time, error) {
	q := p.query
	defer e.lockFor(c)()
	txn, at, err := e.readState(c)
	if err != nil {
		return nil, time.Time{}, err
	}
	var docs []*pb.Document
	if p.nearest != nil {
		docs = e.findNearest(p, at)
	} else {
		p.keep = decodeMask(p)
		docs = e.executeAt(p, at)
	}
	if txn != nil {
		for _, d := range docs {
			txn.read(d.Name, d)
		}
	}
	readTime := e.lastTime
	if !at.IsZero() {
		readTime = at
	}
	if readTime.IsZero() {
		readTime = time.Now().UTC().Truncate(time.Microsecond)
	}
	return project(docs, q.GetSelect()), readTime, nil
}

// execute returns the documents matching a plan, ordered, windowed by
// cursors, offset and limit, reading the index the planner picks; e.mu must
// be held.
func (e *Engine) execute(p *plan) []*pb.Document {
	return e.collect(p, nil).result()
}

// collect streams the index the planner picks into a window for p, passing
// over the documents at the paths in skip; e.mu is held.
func (e *Engine) collect(p *plan, skip map[string]*pb.Document) *window {
	d := e.dbs[p.parent.Database]
	if d == nil {
		return newWindow(p, 0)
	}
	index := e.indexesOf(d)
	s := choose(p, index)
	s.stats = p.stats
	w := newWindow(p, s.sorted)
	s.run(index, func(path string) bool {
		if _, skipped := skip[path]; skipped || !w.inScope(path) {
			return true
		}
		if st := w.p.stats; st != nil {
			st.docs++
		}
		return w.offer(d.docs[path].decodeFields(path, p.keep))
	})
	return w
}

// window collects the documents a plan keeps from a stream of candidates.
type window struct {
	p      *plan
	prefix string
	need   int // offset + limit, or -1
	sorted int // leading orders the candidates arrive sorted by
	docs   []*pb.Document
}

func newWindow(p *plan, sorted int) *window {
	prefix := strings.Join(p.parent.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &window{p: p, prefix: prefix, need: windowSize(p.query), sorted: sorted}
}

// matches reports whether doc (nil: absent) passes the query's filter and has
// its order fields, before any cursor, offset or limit.
func (p *plan) matches(doc *pb.Document) bool {
	return doc != nil && hasOrderFields(doc, p.orders) && p.filter(doc)
}

// inScope reports whether the document at path is in the query's collection.
func (w *window) inScope(path string) bool {
	return inScope(path, w.prefix, w.p.collection, w.p.descendants)
}

// offer considers one candidate in scope and reports whether to go on: once
// the window is full, candidates sorted after the last kept one cannot enter
// it, and with candidates in full query order none can.
func (w *window) offer(doc *pb.Document) bool {
	p := w.p
	if !p.matches(doc) || !w.withinCursors(doc) {
		return true
	}
	if w.need >= 0 && len(w.docs) >= w.need && w.sorted > 0 &&
		(w.sorted == len(p.orders) || len(w.docs) == 0 || compareDocs(doc, w.docs[len(w.docs)-1], p.orders[:w.sorted]) != 0) {
		return false
	}
	w.docs = append(w.docs, doc)
	return w.need < 0 || len(w.docs) < w.need || w.sorted != len(p.orders)
}

// withinCursors reports whether doc lies between the query's cursors.
func (w *window) withinCursors(doc *pb.Document) bool {
	q := w.p.query
	if c := q.GetStartAt(); c != nil {
		cmp := cursorCompare(doc, c.GetValues(), w.p.orders)
		if cmp < 0 || (cmp == 0 && !c.GetBefore()) {
			return false
		}
	}
	if c := q.GetEndAt(); c != nil {
		cmp := cursorCompare(doc, c.GetValues(), w.p.orders)
		if cmp > 0 || (cmp == 0 && c.GetBefore()) {
			return false
		}
	}
	return true
}

// result sorts the kept documents and applies offset and limit.
func (w *window) result() []*pb.Document {
	docs, orders := w.docs, w.p.orders
	if w.sorted < len(orders) {
		sortDocs(docs, orders)
	}
	q := w.p.query
	if off := int(q.GetOffset()); off > 0 {
		if off >= len(docs) {
			return nil
		}
		docs = docs[off:]
	}
	if l := q.GetLimit(); l != nil && int(l.GetValue()) < len(docs) {
		docs = docs[:l.GetValue()]
	}
	return docs
}

// inScope reports whether the document at path belongs to the query's
// collection (or, for collection groups, any collection of that id below prefix).
func inScope(path, prefix, collection string, descendants bool) bool {
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	rest := path[len(prefix):]
	if descendants {
		if collection == "" {
			return true
		}
		parent := rest[:strings.LastIndexByte(rest, '/')]
		return parent == collection || strings.HasSuffix(parent, "/"+collection)
	}
	return len(rest) > len(collection)+1 && rest[:len(collection)] == collection && rest[len(collection)] == '/' &&
		strings.IndexByte(rest[len(collection)+1:], '/') < 0
}

func fieldValue(doc *pb.Document, path FieldPath) (*pb.Value, bool) {
	if len(path) == 1 && path[0] == "__name__" {
		return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: doc.Name}}, true
	}
	return GetField(doc.Fields, path)
}

func hasOrderFields(doc *pb.Document, orders []order) bool {
	for _, o := range orders {
		if len(o.path) == 1 && o.path[0] == "__name__" {
			continue // every document has a name
		}
		if _, ok := GetField(doc.Fields, o.path); !ok {
			return false
		}
	}
	return true
}

func compareDocs(a, b *pb.Document, orders []order) int {
	for _, o := range orders {
		va, _ := fieldValue(a, o.path)
		vb, _ := fieldValue(b, o.path)
		c := Compare(va, vb)
		if o.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// sortDocs sorts documents by orders, reading each document's order values
// once rather than at every comparison.
func sortDocs(docs []*pb.Document, orders []order) {
	type keyed struct {
		doc  *pb.Document
		keys []*pb.Value
	}
	rows := make([]keyed, len(docs))
	keys := make([]*pb.Value, len(docs)*len(orders))
	for i, d := range docs {
		rows[i] = keyed{doc: d, keys: keys[i*len(orders) : (i+1)*len(orders)]}
		for j, o := range orders {
			rows[i].keys[j], _ = fieldValue(d, o.path)
		}
	}
	sort.Slice(rows, func(a, b int) bool {
		for j, o := range orders {
			c := Compare(rows[a].keys[j], rows[b].keys[j])
			if o.desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
	for i := range rows {
		docs[i] = rows[i].doc
	}
}

// cursorCompare compares a document's order values with a cursor's values.
func cursorCompare(doc *pb.Document, values []*pb.Value, orders []order) int {
	for i, v := range values {
		dv, _ := fieldValue(doc, orders[i].path)
		if len(orders[i].path) == 1 && orders[i].path[0] == "__name__" && v.GetStringValue() != "" {
			v = &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: v.GetStringValue()}}
		}
		c := Compare(dv, v)
		if orders[i].desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// predicate reports whether a document passes a query's filter.
type predicate func(*pb.Document) bool

// compileFilter turns a validated filter tree into a predicate, parsing each
// field path once per query rather than once per document.
func compileFilter(f *pb.StructuredQuery_Filter) predicate {
	switch x := f.GetFilterType().(type) {
	case *pb.StructuredQuery_Filter_CompositeFilter:
		var subs []predicate
		for _, sub := range x.CompositeFilter.GetFilters() {
			subs = append(subs, compileFilter(sub))
		}
		or := x.CompositeFilter.GetOp() == pb.StructuredQuery_CompositeFilter_OR
		return func(doc *pb.Document) bool {
			for _, sub := range subs {
				if sub(doc) == or {
					return or
				}
			}
			return !or
		}
	case *pb.StructuredQuery_Filter_FieldFilter:
		path, _ := ParseFieldPath(x.FieldFilter.GetField().GetFieldPath())
		op, want := x.FieldFilter.GetOp(), x.FieldFilter.GetValue()
		return func(doc *pb.Document) bool {
			v, ok := fieldValue(doc, path)
			return ok && fieldMatches(v, op, want)
		}
	case *pb.StructuredQuery_Filter_UnaryFilter:
		path, _ := ParseFieldPath(x.UnaryFilter.GetField().GetFieldPath())
		op := x.UnaryFilter.GetOp()
		return func(doc *pb.Document) bool {
			v, ok := fieldValue(doc, path)
			if !ok {
				return false
			}
			switch op {
			case pb.StructuredQuery_UnaryFilter_IS_NAN:
				return isNaN(v)
			case pb.StructuredQuery_UnaryFilter_IS_NULL:
				return isNull(v)
			case pb.StructuredQuery_UnaryFilter_IS_NOT_NAN:
				return !isNaN(v) && !isNull(v) // as != NaN
			case pb.StructuredQuery_UnaryFilter_IS_NOT_NULL:
				return !isNull(v)
			}
			return false
		}
	}
	return func(*pb.Document) bool { return true }
}

func fieldMatches(v *pb.Value, op pb.StructuredQuery_FieldFilter_Operator, q *pb.Value) bool {
	switch op {
	case pb.StructuredQuery_FieldFilter_EQUAL:
		return equalForQuery(v, q)
	case pb.StructuredQuery_FieldFilter_NOT_EQUAL:
		// != and not-in never match null (nor, by fieldValue, a missing
		// field), and count NaN equal to NaN.
		return !isNull(v) && !equalForQuery(v, q) && !(isNaN(v) && isNaN(q))
	case pb.StructuredQuery_FieldFilter_LESS_THAN, pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL,
		pb.StructuredQuery_FieldFilter_GREATER_THAN, pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL:
		if typeOrder(v) != typeOrder(q) || isNaN(v) || isNaN(q) {
			return false
		}
		c := Compare(v, q)
		switch op {
		case pb.StructuredQuery_FieldFilter_LESS_THAN:
			return c < 0
		case pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL:
			return c <= 0
		case pb.StructuredQuery_FieldFilter_GREATER_THAN:
			return c > 0
		default:
			return c >= 0
		}
	case pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS:
		for _, e := range v.GetArrayValue().GetValues() {
			if equalForQuery(e, q) {
				return true
			}
		}
	case pb.StructuredQuery_FieldFilter_IN:
		for _, e := range q.GetArrayValue().GetValues() {
			if !isNull(e) && equalForQuery(v, e) { // in [null] matches nothing
				return true
			}
		}
	case pb.StructuredQuery_FieldFilter_NOT_IN:
		if isNull(v) {
			return false
		}
		for _, e := range q.GetArrayValue().GetValues() {
			if isNull(e) || equalForQuery(v, e) || (isNaN(v) && isNaN(e)) {
				return false // not-in [null, …] matches nothing
			}
		}
		return true
	case pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY:
		for _, e := range v.GetArrayValue().GetValues() {
			for _, w := range q.GetArrayValue().GetValues() {
				if !isNull(w) && equalForQuery(e, w) { // nor does array-contains-any [null]
					return true
				}
			}
		}
	}
	return false
}

// decodeMask is the top-level fields a projected query reads (selected,
// filtered on or ordered by), or nil: all of them.
func decodeMask(p *plan) map[string]bool {
	sel := p.query.GetSelect()
	if sel == nil {
		return nil
	}
	keep := map[string]bool{}
	add := func(field string) bool {
		path, err := ParseFieldPath(field)
		if err != nil || len(path) == 0 {
			return false
		}
		keep[path[0]] = true
		return true
	}
	for _, f := range sel.GetFields() {
		if !add(f.GetFieldPath()) {
			return nil
		}
	}
	for _, o := range p.orders {
		if len(o.path) > 0 {
			keep[o.path[0]] = true
		}
	}
	var walk func(f *pb.StructuredQuery_Filter) bool
	walk = func(f *pb.StructuredQuery_Filter) bool {
		switch t := f.GetFilterType().(type) {
		case nil:
			return true
		case *pb.StructuredQuery_Filter_CompositeFilter:
			for _, sub := range t.CompositeFilter.GetFilters() {
				if !walk(sub) {
					return false
				}
			}
			return true
		case *pb.StructuredQuery_Filter_FieldFilter:
			return add(t.FieldFilter.GetField().GetFieldPath())
		case *pb.StructuredQuery_Filter_UnaryFilter:
			return add(t.UnaryFilter.GetField().GetFieldPath())
		}
		return false
	}
	if !walk(p.query.GetWhere()) {
		return nil
	}
	return keep
}

// project keeps only the selected fields (all fields without a projection).
func project(docs []*pb.Document, sel *pb.StructuredQuery_Projection) []*pb.Document {
	if sel == nil {
		return docs
	}
	paths := projectionPaths(sel)
	out := make([]*pb.Document, len(docs))
	for i, d := range docs {
		out[i] = projectOne(d, paths)
	}
	return out
}

// projectionPaths are a projection's field paths (nil: no projection).
func projectionPaths(sel *pb.StructuredQuery_Projection) []FieldPath {
	if sel == nil {
		return nil
	}
	paths := []FieldPath{}
	for _, f := range sel.GetFields() {
		path, err := ParseFieldPath(f.GetFieldPath())
		if err != nil || (len(path) == 1 && path[0] == "__name__") {
			continue
		}
		paths = append(paths, path)
	}
	return paths
}

// projectOne is d with only the fields at paths (d itself for nil paths).
func projectOne(d *pb.Document, paths []FieldPath) *pb.Document {
	if paths == nil {
		return d
	}
	p := &pb.Document{Name: d.Name, CreateTime: d.CreateTime, UpdateTime: d.UpdateTime, Fields: make(map[string]*pb.Value, len(paths))}
	for _, path := range paths {
		if v, ok := GetField(d.Fields, path); ok {
			setField(p.Fields, path, v) // shared, as an unprojected query shares the stored document
		}
	}
	return p
}
