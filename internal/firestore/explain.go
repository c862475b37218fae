package firestore

import (
	"context"
	"fmt"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// aggregationEntriesPerRead is how many index entries an aggregation reads
// per billed read operation.
const aggregationEntriesPerRead = 1000

// ExplainQuery answers a RunQuery with explain_options: without analyze, the
// plan alone (no documents, no read time); with analyze, the query's
// documents and read time, and the plan with the execution's statistics:
// the index rows and documents the executor read. As in production, the
// documents read are billed, and index entries only when the query has
// range filters on more than one field.
func (e *Engine) ExplainQuery(ctx context.Context, caller identity.Principal, parent string, q *pb.StructuredQuery, c Consistency, analyze bool) ([]*pb.Document, time.Time, *pb.ExplainMetrics, error) {
	p, err := e.explainPlan(ctx, caller, parent, q, c)
	if err != nil || !analyze {
		return nil, time.Time{}, &pb.ExplainMetrics{PlanSummary: planSummary(p)}, err
	}
	stats := &scanStats{}
	start := time.Now()
	docs, readTime, err := e.query(ctx, caller, parent, q, c, stats)
	if err != nil {
		return nil, time.Time{}, nil, err
	}
	billed := billing{docs: stats.docs}
	if rangeFields(q) > 1 {
		billed.entries = stats.entries
	}
	es := executionStats(int64(len(docs)), *stats, billed, time.Since(start))
	return docs, readTime, &pb.ExplainMetrics{PlanSummary: planSummary(p), ExecutionStats: es}, nil
}

// ExplainResponses lays out the RunQuery answer to an explained query as
// production streams it: without analyze, one response with the plan; with
// analyze, one response per document, the last also carrying the metrics,
// or, without documents, one with the read time and the metrics.
func ExplainResponses(docs []*pb.Document, readTime time.Time, metrics *pb.ExplainMetrics, analyze bool) []*pb.RunQueryResponse {
	if !analyze {
		return []*pb.RunQueryResponse{{ExplainMetrics: metrics}}
	}
	rt := timestamppb.New(readTime)
	out := make([]*pb.RunQueryResponse, 0, max(len(docs), 1))
	for _, d := range docs {
		out = append(out, &pb.RunQueryResponse{Document: d, ReadTime: rt})
	}
	if len(out) == 0 {
		out = append(out, &pb.RunQueryResponse{ReadTime: rt})
	}
	out[len(out)-1].ExplainMetrics = metrics
	return out
}

// ExplainAggregate answers a RunAggregationQuery with explain_options, as
// ExplainQuery does. Production reads an aggregation's index entries and no
// document and bills one read per 1,000 entries: the stats report the
// index rows the executor read, documents_scanned stays 0 even where the
// executor reads documents (for sum and avg, or filters a count cannot
// answer from one index).
func (e *Engine) ExplainAggregate(ctx context.Context, caller identity.Principal, parent string, q *pb.StructuredQuery, aggs []*pb.StructuredAggregationQuery_Aggregation, c Consistency, analyze bool) (map[string]*pb.Value, time.Time, *pb.ExplainMetrics, error) {
	if q == nil {
		return nil, time.Time{}, nil, errorf(errs.InvalidArgument, "An aggregation query must have a structured query.")
	}
	p, err := e.explainPlan(ctx, caller, parent, q, c)
	if err != nil || !analyze {
		return nil, time.Time{}, &pb.ExplainMetrics{PlanSummary: planSummary(p)}, err
	}
	stats := &scanStats{}
	start := time.Now()
	fields, readTime, err := e.aggregate(ctx, caller, parent, q, aggs, c, stats)
	if err != nil {
		return nil, time.Time{}, nil, err
	}
	// Production answers an aggregation from index entries alone.
	stats.docs = 0
	es := executionStats(1, *stats, billing{entries: stats.entries}, time.Since(start))
	return fields, readTime, &pb.ExplainMetrics{PlanSummary: planSummary(p), ExecutionStats: es}, nil
}

// explainPlan plans a query to explain, checking the caller may run it.
// Explain reads outside transactions only.
func (e *Engine) explainPlan(ctx context.Context, caller identity.Principal, parent string, q *pb.StructuredQuery, c Consistency) (*plan, error) {
	if c.Transaction != nil {
		return nil, errorf(errs.InvalidArgument, "Query explain is not supported in transactions.")
	}
	return e.checkedPlan(ctx, caller, parent, q)
}

// planSummary names the indexes a plan reads, as production's explain
// does: {"query_scope": "Collection", "properties": "(field ASC, __name__ ASC)"}.
func planSummary(p *plan) *pb.PlanSummary {
	if p == nil {
		return nil
	}
	sum := &pb.PlanSummary{}
	for _, u := range queryIndexes(p) {
		scope := "Collection"
		if u.def.QueryScope == ScopeCollectionGroup {
			scope = "Collection group"
		}
		s, _ := structpb.NewStruct(map[string]any{"query_scope": scope, "properties": u.def.properties()})
		sum.IndexesUsed = append(sum.IndexesUsed, s)
	}
	return sum
}

// billing is what an execution is billed for.
type billing struct {
	docs, entries int64
}

// reads returns the read operations billed: one per document and one per
// 1,000 index entries, at least one (minCost is 1 when that minimum applies).
func (b billing) reads() (reads, minCost int64) {
	reads = b.docs + (b.entries+aggregationEntriesPerRead-1)/aggregationEntriesPerRead
	if reads == 0 {
		return 1, 1
	}
	return reads, 0
}

// executionStats reports an execution as production does, the debug
// counts as decimal strings.
func executionStats(results int64, read scanStats, billed billing, took time.Duration) *pb.ExecutionStats {
	reads, minCost := billed.reads()
	debug, _ := structpb.NewStruct(map[string]any{
		"index_entries_scanned": fmt.Sprint(read.entries),
		"documents_scanned":     fmt.Sprint(read.docs),
		"billing_details": map[string]any{
			"documents_billable":     fmt.Sprint(billed.docs),
			"index_entries_billable": fmt.Sprint(billed.entries),
			"small_ops":              "0",
			"min_query_cost":         fmt.Sprint(minCost),
		},
	})
	return &pb.ExecutionStats{ResultsReturned: results, ReadOperations: reads, ExecutionDuration: durationpb.New(took), DebugStats: debug}
}

// rangeFields returns how many fields q's filters put a range or
// inequality on.
func rangeFields(q *pb.StructuredQuery) int {
	fields, _ := validateFilter(q.GetWhere())
	distinct := map[string]bool{}
	for _, f := range fields {
		distinct[f.String()] = true
	}
	return len(distinct)
}
