package grpcapi

import (
	"errors"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore/pipeline"
	"google.golang.org/grpc/status"
)

// ExecutePipeline implements pb.FirestoreServer: the results in batches,
// the first carrying a new transaction's id, the last the explain stats.
func (s *Server) ExecutePipeline(req *pb.ExecutePipelineRequest, stream pb.Firestore_ExecutePipelineServer) error {
	sendHeaders(stream)
	ctx := stream.Context()
	who, err := s.caller(ctx, req.GetDatabase())
	if err != nil {
		return err
	}
	c, err := s.consistency(req.GetDatabase(), req.GetTransaction(), req.GetNewTransaction(), req.GetReadTime())
	if err != nil {
		return err
	}
	auto := req.GetNewTransaction() != nil && req.GetAutoCommitTransaction()
	res, err := pipeline.Execute(ctx, s.engine, who, pipeline.Request{Database: req.GetDatabase(), Pipeline: req.GetStructuredPipeline(), Consistency: c, AutoCommit: auto})
	if err != nil {
		return pipelineStatus(err)
	}
	if auto && !res.Committed {
		if _, err := s.engine.Commit(ctx, who, req.GetDatabase(), nil, c.Transaction); err != nil {
			return Status(err)
		}
	}
	for _, resp := range res.Responses(c.Transaction, req.GetNewTransaction() != nil) {
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
	return nil
}

// pipelineStatus is a pipeline's error as a status; an analyzed
// pipeline's carries the explain stats of what ran in its details.
func pipelineStatus(err error) error {
	var se *pipeline.StatsError
	if !errors.As(err, &se) {
		return Status(err)
	}
	st := status.Convert(Status(se.Err))
	if withStats, derr := st.WithDetails(se.Stats); derr == nil {
		st = withStats
	}
	return st.Err()
}
