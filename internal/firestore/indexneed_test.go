package firestore

import (
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// TestQueryIndexes: the indexes production reads for a query, as explain
// names them; "composite:" marks an index that must be declared.
func TestQueryIndexes(t *testing.T) {
	const (
		eq   = pb.StructuredQuery_FieldFilter_EQUAL
		gt   = pb.StructuredQuery_FieldFilter_GREATER_THAN
		ne   = pb.StructuredQuery_FieldFilter_NOT_EQUAL
		in   = pb.StructuredQuery_FieldFilter_IN
		has  = pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS
		asc  = pb.StructuredQuery_ASCENDING
		desc = pb.StructuredQuery_DESCENDING
	)
	order := func(field string, dir pb.StructuredQuery_Direction) *pb.StructuredQuery_Order {
		return &pb.StructuredQuery_Order{Field: &pb.StructuredQuery_FieldReference{FieldPath: field}, Direction: dir}
	}
	one := intValue(1)
	for _, tc := range []struct {
		name   string
		where  *pb.StructuredQuery_Filter
		orders []*pb.StructuredQuery_Order
		group  bool
		want   string
	}{
		{name: "no filter", want: "(__name__ ASC)"},
		{name: "one order", orders: []*pb.StructuredQuery_Order{order("a", desc)}, want: "(a DESC, __name__ DESC)"},
		{name: "equalities merge single-field indexes", where: and(fieldFilter("a", eq, one), fieldFilter("b", eq, one)), want: "(a ASC, __name__ ASC); (b ASC, __name__ ASC)"},
		{name: "equality and array-contains merge", where: and(fieldFilter("a", eq, one), fieldFilter("t", has, one)), want: "(a ASC, __name__ ASC); (t CONTAINS, __name__ ASC)"},
		{name: "equality ordered by itself", where: fieldFilter("a", eq, one), orders: []*pb.StructuredQuery_Order{order("a", desc)}, want: "(a ASC, __name__ ASC)"},
		{name: "range on one field", where: fieldFilter("a", gt, one), want: "(a ASC, __name__ ASC)"},
		{name: "equality and order", where: fieldFilter("a", eq, one), orders: []*pb.StructuredQuery_Order{order("b", desc)}, want: "composite:(a ASC, b DESC, __name__ DESC)"},
		{name: "in and order", where: fieldFilter("a", in, arrayOf(one)), orders: []*pb.StructuredQuery_Order{order("b", asc)}, want: "composite:(a ASC, b ASC, __name__ ASC)"},
		{name: "array-contains and order", where: fieldFilter("t", has, one), orders: []*pb.StructuredQuery_Order{order("b", asc)}, want: "composite:(t CONTAINS, b ASC, __name__ ASC)"},
		{name: "two orders", orders: []*pb.StructuredQuery_Order{order("a", asc), order("b", desc)}, want: "composite:(a ASC, b DESC, __name__ DESC)"},
		{name: "range on two fields, implicit order by name", where: and(fieldFilter("salary", gt, one), fieldFilter("experience", gt, one)), want: "composite:(experience ASC, salary ASC, __name__ ASC)"},
		{name: "not-equal and equality", where: and(fieldFilter("a", eq, one), fieldFilter("b", ne, one)), want: "composite:(a ASC, b ASC, __name__ ASC)"},
		{name: "or of equalities", where: or(fieldFilter("a", eq, one), fieldFilter("b", eq, one)), want: "(a ASC, __name__ ASC); (b ASC, __name__ ASC)"},
		{name: "or with an order: one composite per disjunct", where: or(fieldFilter("a", eq, one), fieldFilter("b", eq, one)), orders: []*pb.StructuredQuery_Order{order("c", asc)},
			want: "composite:(a ASC, c ASC, __name__ ASC); composite:(b ASC, c ASC, __name__ ASC)"},
		{name: "collection group", where: fieldFilter("a", eq, one), group: true, want: "group:(a ASC, __name__ ASC)"},
	} {
		q := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "c", AllDescendants: tc.group}}, Where: tc.where, OrderBy: tc.orders}
		p, err := planQuery("projects/p/databases/(default)/documents", q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []string
		for _, u := range queryIndexes(p) {
			s := u.def.properties()
			if u.def.QueryScope == ScopeCollectionGroup {
				s = "group:" + s
			}
			if u.composite {
				s = "composite:" + s
			}
			got = append(got, s)
		}
		if g := strings.Join(got, "; "); g != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, g, tc.want)
		}
	}
}
