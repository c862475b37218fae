package firestore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// WriteStream is one Write stream, independent of transport. The first
// request is the handshake (it names the database) and is answered with a
// stream id and token; each later request is one atomic commit answered with
// its write results and commit time. An empty request after the handshake
// (the client closing the stream) needs no answer: Handle returns nil.
type WriteStream struct {
	e        *Engine
	caller   identity.Principal
	database string
	id       string
	seq      uint64
}

// NewWriteStream starts a write stream for caller.
func (e *Engine) NewWriteStream(caller identity.Principal) *WriteStream {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return &WriteStream{e: e, caller: caller, id: base64.RawURLEncoding.EncodeToString(b)}
}

func (s *WriteStream) token() []byte {
	s.seq++
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, s.seq)
	return b
}

// Handle answers one request; an error ends the stream with that status.
func (s *WriteStream) Handle(ctx context.Context, req *pb.WriteRequest) (*pb.WriteResponse, error) {
	if s.database == "" {
		db, err := ParseDatabase(req.GetDatabase())
		if err != nil {
			return nil, err
		}
		s.database = db
		if len(req.GetWrites()) > 0 {
			return nil, errorf(errs.InvalidArgument, "The first request on a write stream must not contain writes.")
		}
		return &pb.WriteResponse{StreamId: s.id, StreamToken: s.token()}, nil
	}
	if len(req.GetWrites()) == 0 {
		return nil, nil
	}
	res, err := s.e.Commit(ctx, s.caller, s.database, req.GetWrites(), nil)
	if err != nil {
		return nil, err
	}
	return &pb.WriteResponse{StreamToken: s.token(), WriteResults: WriteResults(res), CommitTime: timestamppb.New(res.Time)}, nil
}

// WriteResults converts a commit's results to their wire form.
func WriteResults(res *CommitResult) []*pb.WriteResult {
	out := make([]*pb.WriteResult, len(res.Results))
	for i, r := range res.Results {
		out[i] = &pb.WriteResult{TransformResults: r.TransformResults}
		if !r.UpdateTime.IsZero() {
			out[i].UpdateTime = timestamppb.New(r.UpdateTime)
		}
	}
	return out
}
