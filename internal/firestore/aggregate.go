package firestore

import (
	"context"
	"math"
	"math/big"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/protobuf/proto"
)

// Aggregate runs count, sum and avg aggregations over a query's results.
// As in Firestore, only the documents that have every aggregated field (of
// any type) take part in any of the aggregations. sum stays an integer while
// every summed value is an integer and the exact total fits in 64 bits;
// sums and averages of doubles are the exact total rounded once, so the
// order of the documents does not matter; non-numeric values are ignored;
// avg of no numbers is null.
func (e *Engine) Aggregate(ctx context.Context, caller identity.Principal, parent string, q *pb.StructuredQuery, aggs []*pb.StructuredAggregationQuery_Aggregation, c Consistency) (map[string]*pb.Value, time.Time, error) {
	return e.aggregate(ctx, caller, parent, q, aggs, c, nil)
}

// maxAggregations is production's limit on the aggregations of one query.
const maxAggregations = 5

// aggregate runs aggregations as Aggregate does, counting what it reads in
// stats (nil: not counted).
func (e *Engine) aggregate(ctx context.Context, caller identity.Principal, parent string, q *pb.StructuredQuery, aggs []*pb.StructuredAggregationQuery_Aggregation, c Consistency, stats *scanStats) (map[string]*pb.Value, time.Time, error) {
	if q == nil {
		return nil, time.Time{}, errorf(errs.InvalidArgument, "An aggregation query must have a structured query.")
	}
	if len(aggs) == 0 {
		return nil, time.Time{}, errorf(errs.InvalidArgument, "An aggregation query must have at least one aggregation.")
	}
	if len(aggs) > maxAggregations {
		return nil, time.Time{}, errorf(errs.InvalidArgument, "The maximum number of aggregations allowed in an aggregation query is %d. Received: %d", maxAggregations, len(aggs))
	}
	unprojected := proto.Clone(q).(*pb.StructuredQuery)
	unprojected.Select = nil
	var docs []*pb.Document
	count, readTime, counted, err := e.countFromIndex(ctx, caller, parent, unprojected, aggs, c, stats)
	if err != nil {
		return nil, time.Time{}, err
	}
	if !counted {
		docs, readTime, err = e.query(ctx, caller, parent, unprojected, c, stats)
		if err != nil {
			return nil, time.Time{}, err
		}
		docs = havingFields(docs, aggs)
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
					return nil, time.Time{}, errorf(errs.InvalidArgument, "up_to must be positive")
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
			return nil, time.Time{}, errorf(errs.InvalidArgument, "Unknown aggregation operator.")
		}
	}
	return out, readTime, nil
}

// countFromIndex counts a query's results from the rows of one index,
// decoding no document, when every aggregation is a count and the index
// answers the whole query: no filter, or one equality on a field (not with
// NaN); no order but by name; no cursors or offset; the latest durable
// state, not in a transaction; no limit while a commit is not yet durable.
// counted is false when it cannot.
// It counts the rows it reads in stats (nil: not counted).
func (e *Engine) countFromIndex(ctx context.Context, caller identity.Principal, parent string, q *pb.StructuredQuery, aggs []*pb.StructuredAggregationQuery_Aggregation, c Consistency, stats *scanStats) (n int64, readTime time.Time, counted bool, err error) {
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
	whole := q.GetWhere() == nil && !p.descendants // every document of one collection
	if !whole || !e.buildingCollectionIndex(p.parent.Database) {
		e.ensureIndexes(p)
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	readTime = e.readTimeLocked()
	limit := int64(windowSize(q))
	// The indexes hold commits readers must not see yet, if any: the count
	// is corrected by the documents those changed, unless a limit stops it.
	var undurable map[string]*pb.Document
	if v := e.visibleAt(); !v.IsZero() {
		if limit >= 0 {
			return 0, time.Time{}, false, nil
		}
		undurable = e.hist.overlay(p.parent.Database, v)
	}
	d := e.dbs[p.parent.Database]
	if d == nil || limit == 0 {
		return 0, readTime, true, nil
	}
	w := newWindow(p, 0)
	if whole && e.builtIndex(d, byCollection) == nil {
		// Counting the document table's paths is quicker than waiting
		// for the index that a data folder opens without.
		for path := range d.docs {
			if w.inScope(path) {
				if n++; n == limit {
					break
				}
			}
		}
	} else {
		index := e.indexesOf(d)
		s := choose(p, index)
		s.stats = stats
		s.run(index, func(path string) bool {
			if w.inScope(path) {
				n++
			}
			return limit < 0 || n < limit
		})
	}
	for path, then := range undurable {
		if w.inScope(path) {
			n += b2i(p.matches(then)) - b2i(p.matches(d.docs.get(path)))
		}
	}
	return n, readTime, true, nil
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// havingFields keeps the documents that have every field the
// aggregations name.
func havingFields(docs []*pb.Document, aggs []*pb.StructuredAggregationQuery_Aggregation) []*pb.Document {
	var paths []FieldPath
	for _, a := range aggs {
		field := a.GetSum().GetField()
		if field == nil {
			field = a.GetAvg().GetField()
		}
		if path, err := ParseFieldPath(field.GetFieldPath()); field != nil && err == nil {
			paths = append(paths, path)
		}
	}
	if len(paths) == 0 {
		return docs
	}
	kept := docs[:0:0]
	for _, d := range docs {
		has := true
		for _, path := range paths {
			if _, ok := GetField(d.Fields, path); !ok {
				has = false
				break
			}
		}
		if has {
			kept = append(kept, d)
		}
	}
	return kept
}

// total is an exact sum of numbers: finite values are added without
// rounding, infinities and NaN are tracked apart.
type total struct {
	exact          big.Float
	n              int64
	ints           bool // every value so far is an integer
	nan            bool
	posInf, negInf bool
}

// totalPrecision holds any sum of doubles and 64-bit integers exactly: the
// doubles span 2^-1074 to 2^1024, plus headroom for a trillion of them.
const totalPrecision = 1074 + 1024 + 64

func newTotal() *total {
	t := &total{ints: true}
	t.exact.SetPrec(totalPrecision)
	return t
}

func (t *total) add(v *pb.Value) {
	t.n++
	if i, ok := v.GetValueType().(*pb.Value_IntegerValue); ok {
		var x big.Float
		t.exact.Add(&t.exact, x.SetInt64(i.IntegerValue))
		return
	}
	t.ints = false
	f := asFloat(v)
	switch {
	case math.IsNaN(f):
		t.nan = true
	case math.IsInf(f, 1):
		t.posInf = true
	case math.IsInf(f, -1):
		t.negInf = true
	default:
		var x big.Float
		t.exact.Add(&t.exact, x.SetFloat64(f))
	}
}

// float returns the total rounded to the nearest double.
func (t *total) float() float64 {
	switch {
	case t.nan || (t.posInf && t.negInf):
		return math.NaN()
	case t.posInf:
		return math.Inf(1)
	case t.negInf:
		return math.Inf(-1)
	}
	f, _ := t.exact.Float64()
	return f
}

func totalOf(docs []*pb.Document, path FieldPath) *total {
	t := newTotal()
	for _, d := range docs {
		if v, ok := GetField(d.Fields, path); ok && isIntOrDouble(v) {
			t.add(v)
		}
	}
	return t
}

func sum(docs []*pb.Document, path FieldPath) *pb.Value {
	t := totalOf(docs, path)
	if t.ints {
		if i, acc := t.exact.Int64(); acc == big.Exact {
			return intValue(i)
		}
	}
	return doubleValue(t.float())
}

func avg(docs []*pb.Document, path FieldPath) *pb.Value {
	t := totalOf(docs, path)
	if t.n == 0 {
		return nullValue()
	}
	return doubleValue(t.float() / float64(t.n))
}
