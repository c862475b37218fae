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
	docs, readTime, err := e.RunQuery(ctx, caller, parent, unprojected, c)
	if err != nil {
		return nil, time.Time{}, err
	}
	out := map[string]*pb.Value{}
	for i, a := range aggs {
		alias := a.GetAlias()
		if alias == "" {
			alias = "field_" + string(rune('1'+i))
		}
		switch op := a.GetOperator().(type) {
		case *pb.StructuredAggregationQuery_Aggregation_Count_:
			n := int64(len(docs))
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
