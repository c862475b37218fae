package firestore

import (
	"slices"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

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
