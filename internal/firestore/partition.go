package firestore

import (
	"context"
	"strconv"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
)

// minPartitionSize is the fewest documents production puts in a partition
// (the SDKs' system tests write 2×128+127 documents to see three).
const minPartitionSize = 128

// PartitionQuery answers google.firestore.v1.Firestore.PartitionQuery:
// split points that divide the results of q, a collection group query in
// name order, into partitions of at least minPartitionSize documents, at
// most count points (the request's partition_count), in name order. Running
// q ending before the first point, between each two, and from the last
// reads every document once. The points are paged: pageSize of them (0:
// all) after the pageToken of the previous page, with the next page's
// token ("" after the last).
func (e *Engine) PartitionQuery(ctx context.Context, caller identity.Principal, parent string, q *pb.StructuredQuery, count int64, pageSize int32, pageToken string, c Consistency) ([]*pb.Cursor, string, error) {
	if count <= 0 {
		return nil, "", errorf(errs.InvalidArgument, "partition_count must be positive.")
	}
	if pageSize < 0 {
		return nil, "", errorf(errs.InvalidArgument, "page_size must not be negative.")
	}
	if err := partitionable(q); err != nil {
		return nil, "", err
	}
	skip := 0
	if pageToken != "" {
		n, err := strconv.Atoi(pageToken)
		if err != nil || n < 0 {
			return nil, "", errorf(errs.InvalidArgument, "Invalid page_token.")
		}
		skip = n
	}
	names := &pb.StructuredQuery_Projection{Fields: []*pb.StructuredQuery_FieldReference{{FieldPath: "__name__"}}}
	selected := &pb.StructuredQuery{Select: names, From: q.GetFrom(), OrderBy: q.GetOrderBy()}
	docs, _, err := e.RunQuery(ctx, caller, parent, selected, c)
	if err != nil {
		return nil, "", err
	}
	// Even partitions of at least minPartitionSize, at most count+1 of them.
	size := max(minPartitionSize, (len(docs)+int(count))/(int(count)+1))
	var points []*pb.Cursor
	for i := size; i < len(docs); i += size {
		points = append(points, &pb.Cursor{Values: []*pb.Value{{ValueType: &pb.Value_ReferenceValue{ReferenceValue: docs[i].Name}}}})
	}
	if skip >= len(points) {
		return nil, "", nil
	}
	points = points[skip:]
	if pageSize > 0 && int(pageSize) < len(points) {
		return points[:pageSize], strconv.Itoa(skip + int(pageSize)), nil
	}
	return points, "", nil
}

// partitionable checks that q is what PartitionQuery splits: every
// collection of one id, in name order, with no filter, cursor, offset or
// limit.
func partitionable(q *pb.StructuredQuery) error {
	from := q.GetFrom()
	if len(from) != 1 || !from[0].GetAllDescendants() {
		return errorf(errs.InvalidArgument, "The query to partition must be a collection group query (all_descendants).")
	}
	for _, o := range q.GetOrderBy() {
		if o.GetField().GetFieldPath() != "__name__" || o.GetDirection() == pb.StructuredQuery_DESCENDING {
			return errorf(errs.InvalidArgument, "The query to partition must be ordered by __name__ ascending only.")
		}
	}
	if q.GetWhere() != nil || q.GetStartAt() != nil || q.GetEndAt() != nil || q.GetOffset() != 0 || q.GetLimit() != nil || q.GetSelect() != nil || q.GetFindNearest() != nil {
		return errorf(errs.InvalidArgument, "The query to partition supports no filters, projections, cursors, offset, limit or nearest-neighbour search.")
	}
	return nil
}
