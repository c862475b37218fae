package firestore

import (
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Firestore keeps timestamps to the microsecond: a timestamp value written
// with finer digits is stored cut down to its microsecond (456789 ns
// becomes 456000 ns), and a query's filter and cursor values are cut the
// same way before they are compared, so a query for the timestamp as
// written finds it. Commit, update, create and read times are microseconds
// already (nextTime).

// truncated returns v with every timestamp in it cut to its microsecond:
// v itself when none has finer digits, else a copy that shares the parts
// that needed no change.
func truncated(v *pb.Value) *pb.Value {
	switch x := v.GetValueType().(type) {
	case *pb.Value_TimestampValue:
		if ns := x.TimestampValue.GetNanos(); ns%1000 != 0 {
			return &pb.Value{ValueType: &pb.Value_TimestampValue{TimestampValue: &timestamppb.Timestamp{Seconds: x.TimestampValue.GetSeconds(), Nanos: ns - ns%1000}}}
		}
	case *pb.Value_ArrayValue:
		var out []*pb.Value
		for i, e := range x.ArrayValue.GetValues() {
			t := truncated(e)
			if t != e && out == nil {
				out = append(make([]*pb.Value, 0, len(x.ArrayValue.GetValues())), x.ArrayValue.GetValues()[:i]...)
			}
			if out != nil {
				out = append(out, t)
			}
		}
		if out != nil {
			return arrayValue(out)
		}
	case *pb.Value_MapValue:
		var out map[string]*pb.Value
		for k, e := range x.MapValue.GetFields() {
			if t := truncated(e); t != e {
				if out == nil {
					out = make(map[string]*pb.Value, len(x.MapValue.GetFields()))
					for k, e := range x.MapValue.GetFields() {
						out[k] = e
					}
				}
				out[k] = t
			}
		}
		if out != nil {
			return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: out}}}
		}
	}
	return v
}

// truncateFields cuts the timestamps of fields, in place.
func truncateFields(fields map[string]*pb.Value) {
	for k, v := range fields {
		fields[k] = truncated(v)
	}
}

// truncatedQuery returns q with the timestamps of its filter and cursor
// values cut to their microsecond: q itself when none has finer digits,
// else a copy.
func truncatedQuery(q *pb.StructuredQuery) *pb.StructuredQuery {
	fine := false
	eachQueryValue(q, func(v *pb.Value) *pb.Value {
		fine = fine || truncated(v) != v
		return v
	})
	if !fine {
		return q
	}
	q = proto.Clone(q).(*pb.StructuredQuery)
	eachQueryValue(q, truncated)
	return q
}

// eachQueryValue replaces each filter and cursor value of q with what f
// returns for it.
func eachQueryValue(q *pb.StructuredQuery, f func(*pb.Value) *pb.Value) {
	var filter func(*pb.StructuredQuery_Filter)
	filter = func(fl *pb.StructuredQuery_Filter) {
		switch x := fl.GetFilterType().(type) {
		case *pb.StructuredQuery_Filter_CompositeFilter:
			for _, sub := range x.CompositeFilter.GetFilters() {
				filter(sub)
			}
		case *pb.StructuredQuery_Filter_FieldFilter:
			if x.FieldFilter.Value != nil {
				x.FieldFilter.Value = f(x.FieldFilter.Value)
			}
		}
	}
	filter(q.GetWhere())
	for _, c := range []*pb.Cursor{q.GetStartAt(), q.GetEndAt()} {
		for i, v := range c.GetValues() {
			c.Values[i] = f(v)
		}
	}
}
