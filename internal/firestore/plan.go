// The query planner: a query's validation and normal form (planQuery), the
// access path it reads (choose: one index range, or a union of them), and
// the indexes production would read for it (queryIndexes), which the index
// policy checks against the declared ones.

package firestore

import (
	"math"
	"slices"
	"sort"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
)

// maxDisjunctionValues is production's limit on in and array-contains-any
// values; maxNotInValues its limit on not-in values.
const (
	maxDisjunctionValues = 30
	maxNotInValues       = 10
)

var nameField = FieldPath{"__name__"}

// plan is a validated, normalised query ready to run.
type plan struct {
	parent      Name
	collection  string
	descendants bool
	filter      predicate
	orders      []order
	query       *pb.StructuredQuery
	nearest     *nearest   // a FindNearest stage, or nil
	stats       *scanStats // counts what the executor reads, when explaining; else nil
	// unrecorded: the query is the console's, whose index needs are not
	// recorded (ConsoleQuery).
	unrecorded bool
	// keep is the top-level fields the executor decodes (nil: all); set
	// for a projected query by runQuery.
	keep map[string]bool
}

type order struct {
	path FieldPath
	desc bool
}

func collectionName(p *plan) Name {
	return Name{Database: p.parent.Database, Path: append(append([]string(nil), p.parent.Path...), p.collection)}
}

func planQuery(parent string, q *pb.StructuredQuery) (*plan, error) {
	q = truncatedQuery(q)
	n, err := ParseName(parent)
	if err != nil {
		return nil, err
	}
	if len(n.Path)%2 != 0 {
		return nil, errorf(errs.InvalidArgument, "Invalid parent %q: a query's parent must be a document or the database root.", parent)
	}
	if len(q.GetFrom()) != 1 {
		return nil, errorf(errs.InvalidArgument, "A query must select exactly one collection.")
	}
	from := q.GetFrom()[0]
	if from.GetCollectionId() == "" && !from.GetAllDescendants() {
		return nil, errorf(errs.InvalidArgument, "A query must name its collection.")
	}
	if strings.Contains(from.GetCollectionId(), "/") {
		return nil, errorf(errs.InvalidArgument, "Collection id %q must not contain '/': query the subcollection through its parent document.", from.GetCollectionId())
	}
	inequalities, err := validateFilter(q.GetWhere())
	if err != nil {
		return nil, err
	}
	if err := checkOperatorCombinations(q.GetWhere()); err != nil {
		return nil, err
	}
	p := &plan{parent: n, collection: from.GetCollectionId(), descendants: from.GetAllDescendants(), filter: compileFilter(q.GetWhere()), query: q}
	if p.nearest, err = planNearest(q); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, o := range q.GetOrderBy() {
		path, err := ParseFieldPath(o.GetField().GetFieldPath())
		if err != nil {
			return nil, err
		}
		p.orders = append(p.orders, order{path, o.GetDirection() == pb.StructuredQuery_DESCENDING})
		seen[path.String()] = true
	}
	if err := checkKeyOrder(q.GetWhere(), p.orders, inequalities); err != nil {
		return nil, err
	}
	// Inequality fields not ordered explicitly are ordered by, in field path
	// order, with the last explicit direction; __name__ always comes last.
	lastDesc := len(p.orders) > 0 && p.orders[len(p.orders)-1].desc
	sort.Slice(inequalities, func(i, j int) bool { return slices.Compare(inequalities[i], inequalities[j]) < 0 })
	for _, f := range inequalities {
		if !seen[f.String()] && !isName(f) {
			p.orders = append(p.orders, order{f, lastDesc})
			seen[f.String()] = true
		}
	}
	if !seen["__name__"] {
		p.orders = append(p.orders, order{nameField, len(p.orders) > 0 && p.orders[len(p.orders)-1].desc})
	}
	if q.GetLimit() != nil && q.GetLimit().GetValue() < 0 {
		return nil, errorf(errs.InvalidArgument, "limit is negative")
	}
	for _, c := range []*pb.Cursor{q.GetStartAt(), q.GetEndAt()} {
		if c != nil && len(c.GetValues()) > len(p.orders) {
			return nil, errorf(errs.InvalidArgument, "Cursor has too many values.")
		}
	}
	return p, nil
}

// checkKeyOrder refuses, as production does, what the key (__name__) cannot
// do with inequalities: be ordered by before another field (one ordered
// explicitly after it, or an inequality field the implicit order would put
// after it), or be compared for equality when other fields have
// inequalities and it has none. explicit are the query's own orders.
func checkKeyOrder(where *pb.StructuredQuery_Filter, explicit []order, inequalities []FieldPath) error {
	ordered := map[string]bool{}
	for _, o := range explicit {
		ordered[o.path.String()] = true
	}
	for i, o := range explicit {
		if !isName(o.path) {
			continue
		}
		followed := i < len(explicit)-1
		for _, f := range inequalities {
			followed = followed || !isName(f) && !ordered[f.String()]
		}
		if followed {
			return errorf(errs.InvalidArgument, "order by clause cannot contain more fields after the key")
		}
	}
	otherInequality, keyInequality := false, false
	for _, f := range inequalities {
		keyInequality = keyInequality || isName(f)
		otherInequality = otherInequality || !isName(f)
	}
	if !otherInequality || keyInequality {
		return nil
	}
	for _, ff := range conjuncts(where) {
		if path, _ := ParseFieldPath(ff.GetField().GetFieldPath()); isName(path) && ff.GetOp() == pb.StructuredQuery_FieldFilter_EQUAL {
			return errorf(errs.InvalidArgument, "Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities.")
		}
	}
	return nil
}

// validateFilter checks a filter tree and returns its inequality fields.
func validateFilter(f *pb.StructuredQuery_Filter) ([]FieldPath, error) {
	if f == nil {
		return nil, nil
	}
	switch x := f.GetFilterType().(type) {
	case *pb.StructuredQuery_Filter_CompositeFilter:
		if len(x.CompositeFilter.GetFilters()) == 0 {
			return nil, errorf(errs.InvalidArgument, "A composite filter must have at least one filter.")
		}
		var all []FieldPath
		for _, sub := range x.CompositeFilter.GetFilters() {
			ineq, err := validateFilter(sub)
			if err != nil {
				return nil, err
			}
			all = append(all, ineq...)
		}
		return all, nil
	case *pb.StructuredQuery_Filter_FieldFilter:
		ff := x.FieldFilter
		path, err := ParseFieldPath(ff.GetField().GetFieldPath())
		if err != nil {
			return nil, err
		}
		switch ff.GetOp() {
		case pb.StructuredQuery_FieldFilter_IN, pb.StructuredQuery_FieldFilter_NOT_IN, pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY:
			values := ff.GetValue().GetArrayValue().GetValues()
			if ff.GetValue().GetArrayValue() == nil || len(values) == 0 {
				return nil, errorf(errs.InvalidArgument, "'%s' requires an non-empty ArrayValue.", ff.GetOp())
			}
			most := maxDisjunctionValues
			if ff.GetOp() == pb.StructuredQuery_FieldFilter_NOT_IN {
				most = maxNotInValues
			}
			if len(values) > most {
				return nil, errorf(errs.InvalidArgument, "'%s' supports up to %d comparison values.", ff.GetOp(), most)
			}
		case pb.StructuredQuery_FieldFilter_OPERATOR_UNSPECIFIED:
			return nil, errorf(errs.InvalidArgument, "A field filter must have an operator.")
		}
		switch ff.GetOp() {
		case pb.StructuredQuery_FieldFilter_LESS_THAN, pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL,
			pb.StructuredQuery_FieldFilter_GREATER_THAN, pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL,
			pb.StructuredQuery_FieldFilter_NOT_EQUAL, pb.StructuredQuery_FieldFilter_NOT_IN:
			return []FieldPath{path}, nil
		}
		return nil, nil
	case *pb.StructuredQuery_Filter_UnaryFilter:
		if _, err := ParseFieldPath(x.UnaryFilter.GetField().GetFieldPath()); err != nil {
			return nil, err
		}
		switch x.UnaryFilter.GetOp() {
		case pb.StructuredQuery_UnaryFilter_IS_NOT_NAN, pb.StructuredQuery_UnaryFilter_IS_NOT_NULL:
			path, _ := ParseFieldPath(x.UnaryFilter.GetField().GetFieldPath())
			return []FieldPath{path}, nil
		case pb.StructuredQuery_UnaryFilter_OPERATOR_UNSPECIFIED:
			return nil, errorf(errs.InvalidArgument, "A unary filter must have an operator.")
		}
		return nil, nil
	}
	return nil, errorf(errs.InvalidArgument, "A filter must have a filter type.")
}

// checkOperatorCombinations refuses the operators production does not
// combine in one query, in its words: two array-contains in one disjunct,
// more than one negation (!=, not-in, is-not-NaN, is-not-null), and not-in
// beside in, array-contains-any or an or.
func checkOperatorCombinations(where *pb.StructuredQuery_Filter) error {
	negations := 0
	var notIn, disjunctive bool
	var walk func(f *pb.StructuredQuery_Filter)
	walk = func(f *pb.StructuredQuery_Filter) {
		switch x := f.GetFilterType().(type) {
		case *pb.StructuredQuery_Filter_CompositeFilter:
			c := x.CompositeFilter
			disjunctive = disjunctive || c.GetOp() == pb.StructuredQuery_CompositeFilter_OR && len(c.GetFilters()) > 1
			for _, sub := range c.GetFilters() {
				walk(sub)
			}
		case *pb.StructuredQuery_Filter_FieldFilter:
			switch x.FieldFilter.GetOp() {
			case pb.StructuredQuery_FieldFilter_NOT_EQUAL:
				negations++
			case pb.StructuredQuery_FieldFilter_NOT_IN:
				negations++
				notIn = true
			case pb.StructuredQuery_FieldFilter_IN, pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY:
				disjunctive = true
			}
		case *pb.StructuredQuery_Filter_UnaryFilter:
			switch x.UnaryFilter.GetOp() {
			case pb.StructuredQuery_UnaryFilter_IS_NOT_NAN, pb.StructuredQuery_UnaryFilter_IS_NOT_NULL:
				negations++
			}
		}
	}
	walk(where)
	if mostArrayContains(where) > 1 {
		return errorf(errs.InvalidArgument, "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction.")
	}
	if negations > 1 {
		return errorf(errs.InvalidArgument, "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query.")
	}
	if notIn && disjunctive {
		return errorf(errs.InvalidArgument, "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'.")
	}
	return nil
}

// mostArrayContains is the largest number of array-contains filters one
// disjunct of f (in disjunctive normal form) holds.
func mostArrayContains(f *pb.StructuredQuery_Filter) int {
	switch x := f.GetFilterType().(type) {
	case *pb.StructuredQuery_Filter_CompositeFilter:
		n := 0
		for _, sub := range x.CompositeFilter.GetFilters() {
			if m := mostArrayContains(sub); x.CompositeFilter.GetOp() == pb.StructuredQuery_CompositeFilter_OR {
				n = max(n, m)
			} else {
				n += m
			}
		}
		return n
	case *pb.StructuredQuery_Filter_FieldFilter:
		switch x.FieldFilter.GetOp() {
		case pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY:
			return 1 // array-contains-any is an or of array-contains
		}
	}
	return 0
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

// maxDisjuncts bounds the terms a filter's disjunctive normal form may have
// before index analysis gives up on it (production allows 30).
const maxDisjuncts = 30

// indexUse is one index a query reads, as production would plan it.
type indexUse struct {
	def        IndexDef
	composite  bool // a composite index: it must be declared
	equalities int  // how many leading fields serve equalities
}

// constraint is what one filter asks of the index: an equality, an
// array-contains, or (for the implicit order) nothing more.
type constraint struct {
	path     string
	contains bool
}

// queryIndexes returns the indexes production reads for a query: for each
// disjunct of its filter, either one composite index (equality fields,
// then array-contains, then the ordered fields, then __name__) or the
// automatic single-field indexes it merges. A FindNearest query reads a
// vector index: its equality pre-filters, then the vector field.
func queryIndexes(p *plan) []indexUse {
	group, scope := p.collection, ScopeCollection
	if p.descendants {
		scope = ScopeCollectionGroup
	}
	var out []indexUse
	seen := map[string]bool{}
	add := func(u indexUse) {
		u.def.CollectionGroup, u.def.QueryScope = group, scope
		if k := u.def.indexKey(); !seen[k] {
			seen[k] = true
			out = append(out, u)
		}
	}
	terms, ok := disjuncts(p.query.GetWhere())
	if !ok {
		terms = [][]constraint{nil}
	}
	last := p.orders[len(p.orders)-1]
	nameField := IndexField{FieldPath: "__name__", Order: orderName(last.desc)}
	for _, term := range terms {
		var eq, contains []IndexField
		equal := map[string]bool{}
		for _, c := range term {
			if equal[c.path] {
				continue
			}
			equal[c.path] = true
			if c.contains {
				contains = append(contains, IndexField{FieldPath: c.path, ArrayConfig: "CONTAINS"})
			} else {
				eq = append(eq, IndexField{FieldPath: c.path, Order: "ASCENDING"})
			}
		}
		if n := p.nearest; n != nil {
			vec := IndexField{FieldPath: n.field.String(), VectorConfig: &VectorConfig{Dimension: len(n.query), Flat: &struct{}{}}}
			add(indexUse{def: IndexDef{Fields: slices.Concat(eq, contains, []IndexField{vec})}, composite: true, equalities: len(eq)})
			continue
		}
		var ordered []IndexField
		for _, o := range p.orders {
			if key := o.path.String(); !isName(o.path) && !equal[key] {
				ordered = append(ordered, IndexField{FieldPath: key, Order: orderName(o.desc)})
			}
		}
		if len(ordered) >= 2 || len(ordered) == 1 && len(eq)+len(contains) > 0 {
			fields := slices.Concat(eq, contains, ordered, []IndexField{nameField})
			add(indexUse{def: IndexDef{Fields: fields}, composite: true, equalities: len(eq)})
			continue
		}
		for _, f := range slices.Concat(eq, contains, ordered) {
			name := IndexField{FieldPath: "__name__", Order: "ASCENDING"}
			if f.Order == "DESCENDING" {
				name.Order = "DESCENDING"
			}
			add(indexUse{def: IndexDef{Fields: []IndexField{f, name}}})
		}
		if len(eq)+len(contains)+len(ordered) == 0 {
			add(indexUse{def: IndexDef{Fields: []IndexField{nameField}}})
		}
	}
	return out
}

func orderName(desc bool) string {
	if desc {
		return "DESCENDING"
	}
	return "ASCENDING"
}

// disjuncts returns the equality and array-contains constraints of each
// term of a filter's disjunctive normal form; ok is false when it has more
// than maxDisjuncts terms. Inequalities add nothing here: their fields are
// among the plan's orders.
func disjuncts(f *pb.StructuredQuery_Filter) ([][]constraint, bool) {
	if f == nil {
		return [][]constraint{nil}, true
	}
	switch x := f.GetFilterType().(type) {
	case *pb.StructuredQuery_Filter_FieldFilter:
		path, _ := ParseFieldPath(x.FieldFilter.GetField().GetFieldPath())
		if isName(path) {
			return [][]constraint{nil}, true
		}
		switch x.FieldFilter.GetOp() {
		case pb.StructuredQuery_FieldFilter_EQUAL, pb.StructuredQuery_FieldFilter_IN:
			return [][]constraint{{{path: path.String()}}}, true
		case pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY:
			return [][]constraint{{{path: path.String(), contains: true}}}, true
		}
		return [][]constraint{nil}, true
	case *pb.StructuredQuery_Filter_UnaryFilter:
		path, _ := ParseFieldPath(x.UnaryFilter.GetField().GetFieldPath())
		switch x.UnaryFilter.GetOp() {
		case pb.StructuredQuery_UnaryFilter_IS_NULL, pb.StructuredQuery_UnaryFilter_IS_NAN:
			return [][]constraint{{{path: path.String()}}}, true
		}
		return [][]constraint{nil}, true
	case *pb.StructuredQuery_Filter_CompositeFilter:
		subs := x.CompositeFilter.GetFilters()
		if x.CompositeFilter.GetOp() == pb.StructuredQuery_CompositeFilter_OR {
			var out [][]constraint
			for _, sub := range subs {
				terms, ok := disjuncts(sub)
				if !ok || len(out)+len(terms) > maxDisjuncts {
					return nil, false
				}
				out = append(out, terms...)
			}
			return out, true
		}
		out := [][]constraint{nil}
		for _, sub := range subs {
			terms, ok := disjuncts(sub)
			if !ok || len(out)*len(terms) > maxDisjuncts {
				return nil, false
			}
			var next [][]constraint
			for _, a := range out {
				for _, b := range terms {
					next = append(next, slices.Concat(a, b))
				}
			}
			out = next
		}
		return out, true
	}
	return [][]constraint{nil}, true
}
