package firestore

import (
	"context"
	"math"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/protobuf/proto"
)

// Aggregate runs count, sum and avg aggregations over a query's results.
// sum stays an integer while every summed value is an integer and it does
// not overflow; non-numeric values are ignored; avg of no numbers is null.
func (e *Engine) Aggregate(ctx context.Context, caller identity.Principal, parent string, q *pb.StructuredQuery, aggs []*pb.StructuredAggregationQuery_Aggregation, c Consistency) (map[string]*pb.Value, time.Time, error) {
	if q == nil {
		return nil, time.Time{}, errorf(InvalidArgument, "An aggregation query must have a structured query.")
	}
	if len(aggs) == 0 {
		return nil, time.Time{}, errorf(InvalidArgument, "An aggregation query must have at least one aggregation.")
	}
	if len(aggs) > 5 {
		return nil, time.Time{}, errorf(InvalidArgument, "Aggregations are limited to 5 per request.")
	}
	unprojected := proto.Clone(q).(*pb.StructuredQuery)
	unprojected.Select = nil
	var docs []*pb.Document
	count, readTime, counted, err := e.countFromIndex(ctx, caller, parent, unprojected, aggs, c)
	if err != nil {
		return nil, time.Time{}, err
	}
	if !counted {
		docs, readTime, err = e.RunQuery(ctx, caller, parent, unprojected, c)
		if err != nil {
			return nil, time.Time{}, err
		}
		count = int64(len(docs))
	}
	out := map[string]*pb.Value{}
	for i, a := range aggs {
		alias := a.GetAlias()
		if alias == "" {
			alias = "field_" + string(rune('1'+i))
		}
		switch op := a.GetOperator().(type) {
		case *pb.StructuredAggregationQuery_Aggregation_Count_:
			n := count
			if up := op.Count.GetUpTo(); up != nil {
				if up.GetValue() <= 0 {
					return nil, time.Time{}, errorf(InvalidArgument, "up_to must be positive")
				}
				n = min(n, up.GetValue())
			}
			out[alias] = intValue(n)
		case *pb.StructuredAggregationQuery_Aggregation_Sum_:
			path, err := ParseFieldPath(op.Sum.GetField().GetFieldPath())
			if err != nil {
				return nil, time.Time{}, err
			}
			out[alias] = sum(docs, path)
		case *pb.StructuredAggregationQuery_Aggregation_Avg_:
			path, err := ParseFieldPath(op.Avg.GetField().GetFieldPath())
			if err != nil {
				return nil, time.Time{}, err
			}
			out[alias] = avg(docs, path)
		default:
			return nil, time.Time{}, errorf(InvalidArgument, "Unknown aggregation operator.")
		}
	}
	return out, readTime, nil
}

// countFromIndex counts a query's results from the rows of one index,
// decoding no document, when every aggregation is a count and the index
// answers the whole query: no filter, or one equality on a field (not with
// NaN); no order but by name; no cursors or offset; the latest state, not
// in a transaction. counted is false when it cannot.
func (e *Engine) countFromIndex(ctx context.Context, caller identity.Principal, parent string, q *pb.StructuredQuery, aggs []*pb.StructuredAggregationQuery_Aggregation, c Consistency) (n int64, readTime time.Time, counted bool, err error) {
	for _, a := range aggs {
		if a.GetCount() == nil {
			return 0, time.Time{}, false, nil
		}
	}
	if c.Transaction != nil || !c.ReadTime.IsZero() || q.GetStartAt() != nil || q.GetEndAt() != nil || q.GetOffset() != 0 || q.GetFindNearest() != nil {
		return 0, time.Time{}, false, nil
	}
	if w := q.GetWhere(); w != nil {
		ff := w.GetFieldFilter()
		path, _ := ParseFieldPath(ff.GetField().GetFieldPath())
		if ff.GetOp() != pb.StructuredQuery_FieldFilter_EQUAL || isName(path) || isNaN(ff.GetValue()) {
			return 0, time.Time{}, false, nil
		}
	}
	p, err := planQuery(parent, q)
	if err != nil || len(p.orders) != 1 || !isName(p.orders[0].path) {
		return 0, time.Time{}, false, nil // RunQuery reports a bad query
	}
	if err := e.check(ctx, caller, Access{Method: MethodList, Name: collectionName(p), Query: q}); err != nil {
		return 0, time.Time{}, false, err
	}
	e.ensureIndexes(p)
	e.mu.RLock()
	defer e.mu.RUnlock()
	readTime = e.readTimeLocked()
	d := e.dbs[p.parent.Database]
	if d == nil {
		return 0, readTime, true, nil
	}
	limit := int64(windowSize(q))
	w := newWindow(p, 0)
	index := e.indexesOf(d)
	choose(p, index).run(index, func(path string) bool {
		if limit >= 0 && n >= limit {
			return false
		}
		if w.inScope(path) {
			n++
		}
		return true
	})
	return n, readTime, true, nil
}

func numbersAt(docs []*pb.Document, path FieldPath) []*pb.Value {
	var out []*pb.Value
	for _, d := range docs {
		if v, ok := getField(d.Fields, path); ok && typeOrder(v) == 2 {
			out = append(out, v)
		}
	}
	return out
}

func sum(docs []*pb.Document, path FieldPath) *pb.Value {
	var i int64
	var f float64
	allInts := true
	for _, v := range numbersAt(docs, path) {
		if iv, ok := v.GetValueType().(*pb.Value_IntegerValue); ok && allInts {
			next := i + iv.IntegerValue
			if (iv.IntegerValue > 0 && next < i) || (iv.IntegerValue < 0 && next > i) {
				allInts = false
				f = float64(i) + float64(iv.IntegerValue)
				continue
			}
			i = next
			continue
		}
		if allInts {
			allInts = false
			f = float64(i)
		}
		f += asFloat(v)
	}
	if allInts {
		return intValue(i)
	}
	return doubleValue(f)
}

func avg(docs []*pb.Document, path FieldPath) *pb.Value {
	nums := numbersAt(docs, path)
	if len(nums) == 0 {
		return nullValue()
	}
	var total float64
	for _, v := range nums {
		total += asFloat(v)
	}
	mean := total / float64(len(nums))
	if math.IsInf(total, 0) {
		mean = total
	}
	return doubleValue(mean)
}
