// Package grpcapi serves the Firestore engine as google.firestore.v1.Firestore
// over gRPC, as the Go SDK and the JS SDK in Node speak it. It only
// translates: requests become engine calls, engine errors become statuses.
package grpcapi

import (
	"context"
	"errors"
	"io"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Server implements pb.FirestoreServer over an engine.
type Server struct {
	pb.UnimplementedFirestoreServer
	engine *firestore.Engine
	creds  identity.Credentials
}

// Register adds the Firestore service to a gRPC server; creds decides which
// callers are believed.
func Register(s *grpc.Server, e *firestore.Engine, creds identity.Credentials) {
	pb.RegisterFirestoreServer(s, &Server{engine: e, creds: creds})
}

// Status maps an engine error to its gRPC status (through Kind.Status).
func Status(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok && !isEngineError(err) {
		return err
	}
	code, _, _ := errs.KindOf(err).Status()
	return status.Error(codes.Code(code), err.Error())
}

func isEngineError(err error) bool {
	var e *errs.Error
	return errors.As(err, &e)
}

// caller reads the principal from the authorization metadata, for a
// request about the resource name (a document, a parent or a database;
// "" for a stream, whose project the SDKs name in the
// google-cloud-resource-prefix metadata).
func (s *Server) caller(ctx context.Context, name string) (identity.Principal, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	auth := ""
	if v := md.Get("authorization"); len(v) > 0 {
		auth = v[0]
	}
	if v := md.Get("google-cloud-resource-prefix"); name == "" && len(v) > 0 {
		name = v[0]
	}
	p, err := s.creds.Authenticate(auth, firestore.ProjectOf(name))
	if err != nil {
		return p, status.Error(codes.Unauthenticated, "Invalid authorization token.")
	}
	return p, nil
}

// GetDocument implements pb.FirestoreServer.
func (s *Server) GetDocument(ctx context.Context, req *pb.GetDocumentRequest) (*pb.Document, error) {
	who, err := s.caller(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	docs, _, err := s.engine.BatchGet(ctx, who, []string{req.GetName()}, firestore.ConsistencyOf(req.GetTransaction(), req.GetReadTime()))
	if err != nil {
		return nil, Status(err)
	}
	if docs[0] == nil {
		return nil, status.Errorf(codes.NotFound, "Document %q not found.", req.GetName())
	}
	return firestore.Mask(docs[0], req.GetMask()), nil
}

// BatchGetDocuments implements pb.FirestoreServer.
func (s *Server) BatchGetDocuments(req *pb.BatchGetDocumentsRequest, stream pb.Firestore_BatchGetDocumentsServer) error {
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
	docs, readTime, err := s.engine.BatchGet(ctx, who, req.GetDocuments(), c)
	if err != nil {
		return Status(err)
	}
	rt := timestamppb.New(readTime)
	for i, doc := range docs {
		resp := &pb.BatchGetDocumentsResponse{ReadTime: rt}
		if i == 0 && req.GetNewTransaction() != nil {
			resp.Transaction = c.Transaction
		}
		if doc != nil {
			resp.Result = &pb.BatchGetDocumentsResponse_Found{Found: firestore.Mask(doc, req.GetMask())}
		} else {
			resp.Result = &pb.BatchGetDocumentsResponse_Missing{Missing: req.GetDocuments()[i]}
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
	return nil
}

// consistency returns the state a read request selects (see
// Engine.ReadConsistency).
func (s *Server) consistency(database string, txn []byte, opts *pb.TransactionOptions, readTime *timestamppb.Timestamp) (firestore.Consistency, error) {
	c, err := s.engine.ReadConsistency(database, txn, opts, readTime)
	return c, Status(err)
}

// Commit implements pb.FirestoreServer.
func (s *Server) Commit(ctx context.Context, req *pb.CommitRequest) (*pb.CommitResponse, error) {
	who, err := s.caller(ctx, req.GetDatabase())
	if err != nil {
		return nil, err
	}
	res, err := s.engine.Commit(ctx, who, req.GetDatabase(), req.GetWrites(), req.GetTransaction())
	if err != nil {
		return nil, Status(err)
	}
	return &pb.CommitResponse{WriteResults: firestore.WriteResults(res), CommitTime: timestamppb.New(res.Time)}, nil
}

// BatchWrite implements pb.FirestoreServer: each write commits on its own.
func (s *Server) BatchWrite(ctx context.Context, req *pb.BatchWriteRequest) (*pb.BatchWriteResponse, error) {
	who, err := s.caller(ctx, req.GetDatabase())
	if err != nil {
		return nil, err
	}
	resp, err := s.engine.BatchWrite(ctx, who, req.GetDatabase(), req.GetWrites())
	return resp, Status(err)
}

// BeginTransaction implements pb.FirestoreServer.
func (s *Server) BeginTransaction(_ context.Context, req *pb.BeginTransactionRequest) (*pb.BeginTransactionResponse, error) {
	id, err := s.engine.BeginTransaction(req.GetDatabase(), req.GetOptions())
	if err != nil {
		return nil, Status(err)
	}
	return &pb.BeginTransactionResponse{Transaction: id}, nil
}

// Rollback implements pb.FirestoreServer.
func (s *Server) Rollback(_ context.Context, req *pb.RollbackRequest) (*emptypb.Empty, error) {
	if err := s.engine.Rollback(req.GetDatabase(), req.GetTransaction()); err != nil {
		return nil, Status(err)
	}
	return &emptypb.Empty{}, nil
}

// RunQuery implements pb.FirestoreServer.
func (s *Server) RunQuery(req *pb.RunQueryRequest, stream pb.Firestore_RunQueryServer) error {
	sendHeaders(stream)
	ctx := stream.Context()
	who, err := s.caller(ctx, req.GetParent())
	if err != nil {
		return err
	}
	db, _, _ := cutDocuments(req.GetParent())
	c, err := s.consistency(db, req.GetTransaction(), req.GetNewTransaction(), req.GetReadTime())
	if err != nil {
		return err
	}
	if opts := req.GetExplainOptions(); opts != nil {
		return s.explainQuery(ctx, who, req, c, opts.GetAnalyze(), stream)
	}
	docs, readTime, err := s.engine.RunQuery(ctx, who, req.GetParent(), req.GetStructuredQuery(), c)
	if err != nil {
		return Status(err)
	}
	rt := timestamppb.New(readTime)
	if len(docs) == 0 {
		resp := &pb.RunQueryResponse{ReadTime: rt}
		if req.GetNewTransaction() != nil {
			resp.Transaction = c.Transaction
		}
		return stream.Send(resp)
	}
	for i, d := range docs {
		resp := &pb.RunQueryResponse{Document: d, ReadTime: rt}
		if i == 0 && req.GetNewTransaction() != nil {
			resp.Transaction = c.Transaction
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
	return nil
}

// explainQuery answers a RunQuery with explain_options as
// firestore.ExplainResponses lays it out.
func (s *Server) explainQuery(ctx context.Context, who identity.Principal, req *pb.RunQueryRequest, c firestore.Consistency, analyze bool, stream pb.Firestore_RunQueryServer) error {
	docs, readTime, metrics, err := s.engine.ExplainQuery(ctx, who, req.GetParent(), req.GetStructuredQuery(), c, analyze)
	if err != nil {
		return Status(err)
	}
	for _, resp := range firestore.ExplainResponses(docs, readTime, metrics, analyze) {
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
	return nil
}

func cutDocuments(parent string) (db, rest string, ok bool) {
	const sep = "/documents"
	for i := 0; i+len(sep) <= len(parent); i++ {
		if parent[i:i+len(sep)] == sep {
			return parent[:i], parent[i+len(sep):], true
		}
	}
	return parent, "", false
}

// RunAggregationQuery implements pb.FirestoreServer.
func (s *Server) RunAggregationQuery(req *pb.RunAggregationQueryRequest, stream pb.Firestore_RunAggregationQueryServer) error {
	sendHeaders(stream)
	ctx := stream.Context()
	who, err := s.caller(ctx, req.GetParent())
	if err != nil {
		return err
	}
	q := req.GetStructuredAggregationQuery()
	if q == nil || q.GetStructuredQuery() == nil {
		return status.Error(codes.InvalidArgument, "An aggregation query must have a structured query.")
	}
	db, _, _ := cutDocuments(req.GetParent())
	c, err := s.consistency(db, req.GetTransaction(), req.GetNewTransaction(), req.GetReadTime())
	if err != nil {
		return err
	}
	if opts := req.GetExplainOptions(); opts != nil {
		fields, readTime, metrics, err := s.engine.ExplainAggregate(ctx, who, req.GetParent(), q.GetStructuredQuery(), q.GetAggregations(), c, opts.GetAnalyze())
		if err != nil {
			return Status(err)
		}
		resp := &pb.RunAggregationQueryResponse{ExplainMetrics: metrics}
		if opts.GetAnalyze() {
			resp.Result, resp.ReadTime = &pb.AggregationResult{AggregateFields: fields}, timestamppb.New(readTime)
		}
		return stream.Send(resp)
	}
	fields, readTime, err := s.engine.Aggregate(ctx, who, req.GetParent(), q.GetStructuredQuery(), q.GetAggregations(), c)
	if err != nil {
		return Status(err)
	}
	resp := &pb.RunAggregationQueryResponse{Result: &pb.AggregationResult{AggregateFields: fields}, ReadTime: timestamppb.New(readTime)}
	if req.GetNewTransaction() != nil {
		resp.Transaction = c.Transaction
	}
	return stream.Send(resp)
}

// ListCollectionIds implements pb.FirestoreServer.
func (s *Server) ListCollectionIds(ctx context.Context, req *pb.ListCollectionIdsRequest) (*pb.ListCollectionIdsResponse, error) {
	who, err := s.caller(ctx, req.GetParent())
	if err != nil {
		return nil, err
	}
	ids, next, err := s.engine.CollectionIDs(who, req.GetParent(), int(req.GetPageSize()), req.GetPageToken())
	if err != nil {
		return nil, Status(err)
	}
	return &pb.ListCollectionIdsResponse{CollectionIds: ids, NextPageToken: next}, nil
}

// ListDocuments implements pb.FirestoreServer.
func (s *Server) ListDocuments(ctx context.Context, req *pb.ListDocumentsRequest) (*pb.ListDocumentsResponse, error) {
	who, err := s.caller(ctx, req.GetParent())
	if err != nil {
		return nil, err
	}
	docs, next, err := s.engine.ListDocuments(ctx, who, req.GetParent(), req.GetCollectionId(), int(req.GetPageSize()), req.GetPageToken(), req.GetShowMissing(), firestore.ConsistencyOf(req.GetTransaction(), req.GetReadTime()))
	if err != nil {
		return nil, Status(err)
	}
	for i, d := range docs {
		docs[i] = firestore.Mask(d, req.GetMask())
	}
	return &pb.ListDocumentsResponse{Documents: docs, NextPageToken: next}, nil
}

// CreateDocument implements pb.FirestoreServer.
func (s *Server) CreateDocument(ctx context.Context, req *pb.CreateDocumentRequest) (*pb.Document, error) {
	id := req.GetDocumentId()
	if id == "" {
		id = firestore.NewID()
	}
	doc := &pb.Document{Name: req.GetParent() + "/" + req.GetCollectionId() + "/" + id, Fields: req.GetDocument().GetFields()}
	w := &pb.Write{Operation: &pb.Write_Update{Update: doc}, CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: false}}}
	return s.writeOne(ctx, doc.Name, w, req.GetMask())
}

// UpdateDocument implements pb.FirestoreServer.
func (s *Server) UpdateDocument(ctx context.Context, req *pb.UpdateDocumentRequest) (*pb.Document, error) {
	w := &pb.Write{Operation: &pb.Write_Update{Update: req.GetDocument()}, UpdateMask: req.GetUpdateMask(), CurrentDocument: req.GetCurrentDocument()}
	return s.writeOne(ctx, req.GetDocument().GetName(), w, req.GetMask())
}

func (s *Server) writeOne(ctx context.Context, name string, w *pb.Write, mask *pb.DocumentMask) (*pb.Document, error) {
	who, err := s.caller(ctx, name)
	if err != nil {
		return nil, err
	}
	db, _, _ := cutDocuments(name)
	if _, err := s.engine.Commit(ctx, who, db, []*pb.Write{w}, nil); err != nil {
		return nil, Status(err)
	}
	doc, err := s.engine.Get(ctx, identity.Owner, name)
	if err != nil {
		return nil, Status(err)
	}
	return firestore.Mask(doc, mask), nil
}

// DeleteDocument implements pb.FirestoreServer.
func (s *Server) DeleteDocument(ctx context.Context, req *pb.DeleteDocumentRequest) (*emptypb.Empty, error) {
	who, err := s.caller(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	db, _, _ := cutDocuments(req.GetName())
	w := &pb.Write{Operation: &pb.Write_Delete{Delete: req.GetName()}, CurrentDocument: req.GetCurrentDocument()}
	if _, err := s.engine.Commit(ctx, who, db, []*pb.Write{w}, nil); err != nil {
		return nil, Status(err)
	}
	return &emptypb.Empty{}, nil
}

// PartitionQuery implements pb.FirestoreServer.
func (s *Server) PartitionQuery(ctx context.Context, req *pb.PartitionQueryRequest) (*pb.PartitionQueryResponse, error) {
	who, err := s.caller(ctx, req.GetParent())
	if err != nil {
		return nil, err
	}
	points, next, err := s.engine.PartitionQuery(ctx, who, req.GetParent(), req.GetStructuredQuery(), req.GetPartitionCount(), req.GetPageSize(), req.GetPageToken(), firestore.ConsistencyOf(nil, req.GetReadTime()))
	if err != nil {
		return nil, Status(err)
	}
	return &pb.PartitionQueryResponse{Partitions: points, NextPageToken: next}, nil
}

// listenProto holds the encodings of the Listen responses streams share,
// so that a commit's responses are encoded once for all streams.
var listenProto = firestore.Recent[*pb.ListenResponse, server.Encoded]{Max: 128}

// encodedOnce returns the shared encoding of a response streams share, nil
// for one they do not (or that does not encode: Send reports why).
func encodedOnce(r *pb.ListenResponse, shared bool) server.Encoded {
	if !shared {
		return nil
	}
	return listenProto.Get(r, func() server.Encoded {
		b, err := proto.Marshal(r)
		if err != nil {
			return nil
		}
		return b
	})
}

// Listen implements pb.FirestoreServer.
func (s *Server) Listen(stream pb.Firestore_ListenServer) error {
	who, err := s.caller(stream.Context(), "")
	if err != nil {
		return err
	}
	sendErr := make(chan error, 1)
	ls := s.engine.NewListenStream(who, func(r *pb.ListenResponse, shared bool) error {
		var err error
		if enc := encodedOnce(r, shared); enc != nil {
			err = stream.SendMsg(enc)
		} else {
			err = stream.Send(r)
		}
		if err != nil {
			select {
			case sendErr <- err:
			default:
			}
		}
		return err
	})
	defer ls.Close()
	recvErr := make(chan error, 1)
	go func() {
		for {
			req, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			ls.Receive(req)
		}
	}()
	select {
	case err := <-recvErr:
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	case err := <-sendErr:
		return err
	case <-stream.Context().Done():
		return stream.Context().Err()
	}
}

// Write implements pb.FirestoreServer.
func (s *Server) Write(stream pb.Firestore_WriteServer) error {
	ctx := stream.Context()
	who, err := s.caller(ctx, "")
	if err != nil {
		return err
	}
	ws := s.engine.NewWriteStream(who)
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		resp, err := ws.Handle(ctx, req)
		if err != nil {
			return Status(err)
		}
		if resp != nil {
			if err := stream.Send(resp); err != nil {
				return err
			}
		}
	}
}

// sendHeaders answers a server-streaming call's response headers before
// its work, so that an error comes after them rather than alone
// (trailers-only). The Node.js SDKs' streams (google-gax with
// retry-request) take an error that comes before any headers for a lost
// connection and retry the call twice with backoff, so a query refused at
// once would reach them only after about 7 seconds.
func sendHeaders(stream grpc.ServerStream) {
	_ = stream.SendHeader(metadata.MD{})
}
