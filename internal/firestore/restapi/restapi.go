// Package restapi serves the Firestore engine over the REST/JSON mapping the
// JS SDK uses for unary calls: proto3 JSON bodies, streamed RPCs answered as
// one JSON array, errors as {"error":{"code","message","status"}}.
package restapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/firestore/pipeline"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// ConsoleHeader marks a request as loupe's console's (with the owner
// credential): its queries are not counted among those that needed an
// undeclared index.
const ConsoleHeader = "X-Loupe-Console"

// maxBody bounds a request body: 500 writes of 1 MiB documents fit in 16 MiB
// only when they are small, as Firestore's own request limit (10 MiB) intends.
const maxBody = 16 << 20

// requestJSON decodes request bodies as Google's front end does: an unknown field
// is an error. verify is the JS SDK's transaction check (see decodeCommit).
var requestJSON = httpjson.ProtoDecoder{Extra: []string{"google.firestore.v1.Write.verify"}}

// Handler serves the REST API of one engine.
type Handler struct {
	engine *firestore.Engine
	creds  identity.Credentials
}

// Register adds the REST routes to mux; creds decides which callers are
// believed.
func Register(mux Mux, e *firestore.Engine, creds identity.Credentials) {
	h := &Handler{engine: e, creds: creds}
	mux.HandleFunc("POST /v1/projects/{project}/databases/{database}/{rest...}", h.post)
	mux.HandleFunc("GET /v1/projects/{project}/databases/{database}/documents/{rest...}", h.get)
	mux.HandleFunc("PATCH /v1/projects/{project}/databases/{database}/documents/{rest...}", h.write)
	mux.HandleFunc("DELETE /v1/projects/{project}/databases/{database}/documents/{rest...}", h.write)
}

// Mux is where Register adds the routes (server.Mux, or net/http's).
type Mux interface {
	HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request))
}

// post dispatches on the verb after the last colon of the path.
func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	db := "projects/" + r.PathValue("project") + "/databases/" + r.PathValue("database")
	rest := r.PathValue("rest")
	target, verb, ok := cutVerb(rest)
	if !ok && strings.HasPrefix(rest, "documents/") {
		h.write(w, r) // CreateDocument: POST to a collection
		return
	}
	if !ok || (target != "documents" && !strings.HasPrefix(target, "documents/")) {
		httpjson.Error(w, errs.New(errs.NotFound, "Unknown method: "+r.URL.Path))
		return
	}
	who, err := h.creds.Authenticate(r.Header.Get("Authorization"), r.PathValue("project"))
	if err != nil {
		httpjson.Error(w, errs.New(errs.Unauthenticated, "Invalid authorization token."))
		return
	}
	if err := httpjson.CheckParameters(r.URL.Query()); err != nil {
		httpjson.Error(w, err)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "Request payload size exceeds the limit: 16777216 bytes."))
		return
	}
	parent := db + "/" + target
	ctx := r.Context()
	if who.Owner && r.Header.Get(ConsoleHeader) != "" {
		ctx = firestore.ConsoleQuery(ctx)
	}
	switch verb {
	case "commit":
		req := &pb.CommitRequest{}
		writes, err := decodeCommit(body, req)
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		res, err := h.engine.Commit(ctx, who, db, writes, req.GetTransaction())
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		writeJSON(w, &pb.CommitResponse{WriteResults: firestore.WriteResults(res), CommitTime: timestamppb.New(res.Time)})
	case "batchGet":
		req := &pb.BatchGetDocumentsRequest{}
		if err := decode(body, req); err != nil {
			httpjson.Error(w, err)
			return
		}
		c, err := h.engine.ReadConsistency(db, req.GetTransaction(), req.GetNewTransaction(), req.GetReadTime())
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		docs, readTime, err := h.engine.BatchGet(ctx, who, req.GetDocuments(), c)
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		out := make([]proto.Message, len(docs))
		for i, d := range docs {
			resp := &pb.BatchGetDocumentsResponse{ReadTime: timestamppb.New(readTime)}
			if d != nil {
				resp.Result = &pb.BatchGetDocumentsResponse_Found{Found: firestore.Mask(d, req.GetMask())}
			} else {
				resp.Result = &pb.BatchGetDocumentsResponse_Missing{Missing: req.GetDocuments()[i]}
			}
			if i == 0 && req.GetNewTransaction() != nil {
				resp.Transaction = c.Transaction
			}
			out[i] = resp
		}
		writeArray(w, out)
	case "runQuery":
		req := &pb.RunQueryRequest{}
		if err := decode(body, req); err != nil {
			httpjson.Error(w, err)
			return
		}
		c, err := h.engine.ReadConsistency(db, req.GetTransaction(), req.GetNewTransaction(), req.GetReadTime())
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		if opts := req.GetExplainOptions(); opts != nil {
			h.explainQuery(ctx, w, who, parent, req.GetStructuredQuery(), c, opts.GetAnalyze())
			return
		}
		docs, readTime, err := h.engine.RunQuery(ctx, who, parent, req.GetStructuredQuery(), c)
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		out := []proto.Message{}
		for _, d := range docs {
			out = append(out, &pb.RunQueryResponse{Document: d, ReadTime: timestamppb.New(readTime)})
		}
		if len(out) == 0 {
			out = append(out, &pb.RunQueryResponse{ReadTime: timestamppb.New(readTime)})
		}
		if req.GetNewTransaction() != nil {
			out[0].(*pb.RunQueryResponse).Transaction = c.Transaction
		}
		writeArray(w, out)
	case "runAggregationQuery":
		req := &pb.RunAggregationQueryRequest{}
		if err := decode(body, req); err != nil {
			httpjson.Error(w, err)
			return
		}
		q := req.GetStructuredAggregationQuery()
		c, err := h.engine.ReadConsistency(db, req.GetTransaction(), req.GetNewTransaction(), req.GetReadTime())
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		if opts := req.GetExplainOptions(); opts != nil {
			fields, readTime, metrics, err := h.engine.ExplainAggregate(ctx, who, parent, q.GetStructuredQuery(), q.GetAggregations(), c, opts.GetAnalyze())
			if err != nil {
				httpjson.Error(w, err)
				return
			}
			resp := &pb.RunAggregationQueryResponse{ExplainMetrics: metrics}
			if opts.GetAnalyze() {
				resp.Result, resp.ReadTime = &pb.AggregationResult{AggregateFields: fields}, timestamppb.New(readTime)
			}
			writeArray(w, []proto.Message{resp})
			return
		}
		fields, readTime, err := h.engine.Aggregate(ctx, who, parent, q.GetStructuredQuery(), q.GetAggregations(), c)
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		resp := &pb.RunAggregationQueryResponse{Result: &pb.AggregationResult{AggregateFields: fields}, ReadTime: timestamppb.New(readTime)}
		if req.GetNewTransaction() != nil {
			resp.Transaction = c.Transaction
		}
		writeArray(w, []proto.Message{resp})
	case "executePipeline":
		req := &pb.ExecutePipelineRequest{}
		if err := decode(body, req); err != nil {
			httpjson.Error(w, err)
			return
		}
		h.executePipeline(ctx, w, who, db, req)
	case "batchWrite":
		req := &pb.BatchWriteRequest{}
		if err := decode(body, req); err != nil {
			httpjson.Error(w, err)
			return
		}
		if err := firestore.RestoreVerifies(body, req.GetWrites()); err != nil {
			httpjson.Error(w, err)
			return
		}
		resp, err := h.engine.BatchWrite(ctx, who, db, req.GetWrites())
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		writeJSON(w, resp)
	case "partitionQuery":
		req := &pb.PartitionQueryRequest{}
		if err := decode(body, req); err != nil {
			httpjson.Error(w, err)
			return
		}
		points, next, err := h.engine.PartitionQuery(ctx, who, parent, req.GetStructuredQuery(), req.GetPartitionCount(), req.GetPageSize(), req.GetPageToken(), firestore.ConsistencyOf(nil, req.GetReadTime()))
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		writeJSON(w, &pb.PartitionQueryResponse{Partitions: points, NextPageToken: next})
	case "listCollectionIds":
		req := &pb.ListCollectionIdsRequest{}
		if err := decode(body, req); err != nil {
			httpjson.Error(w, err)
			return
		}
		ids, next, err := h.engine.CollectionIDs(who, parent, int(req.GetPageSize()), req.GetPageToken())
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		writeJSON(w, &pb.ListCollectionIdsResponse{CollectionIds: ids, NextPageToken: next})
	case "beginTransaction":
		req := &pb.BeginTransactionRequest{}
		if err := decode(body, req); err != nil {
			httpjson.Error(w, err)
			return
		}
		id, err := h.engine.BeginTransaction(db, req.GetOptions())
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		writeJSON(w, &pb.BeginTransactionResponse{Transaction: id})
	case "rollback":
		req := &pb.RollbackRequest{}
		if err := decode(body, req); err != nil {
			httpjson.Error(w, err)
			return
		}
		if err := h.engine.Rollback(db, req.GetTransaction()); err != nil {
			httpjson.Error(w, err)
			return
		}
		_, _ = w.Write([]byte("{}"))
	default:
		httpjson.Error(w, errs.New(errs.NotFound, "Unknown method: "+verb))
	}
}

// explainQuery answers a runQuery with explainOptions as
// firestore.ExplainResponses lays it out.
func (h *Handler) explainQuery(ctx context.Context, w http.ResponseWriter, who identity.Principal, parent string, q *pb.StructuredQuery, c firestore.Consistency, analyze bool) {
	docs, readTime, metrics, err := h.engine.ExplainQuery(ctx, who, parent, q, c, analyze)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	var out []proto.Message
	for _, resp := range firestore.ExplainResponses(docs, readTime, metrics, analyze) {
		out = append(out, resp)
	}
	writeArray(w, out)
}

// get is the REST GetDocument (used, for one, by Storage rules' firestore.get()).
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	who, err := h.creds.Authenticate(r.Header.Get("Authorization"), r.PathValue("project"))
	if err != nil {
		httpjson.Error(w, errs.New(errs.Unauthenticated, "Invalid authorization token."))
		return
	}
	if err := httpjson.CheckParameters(r.URL.Query(), documentParameters...); err != nil {
		httpjson.Error(w, err)
		return
	}
	res := resourceOf(r)
	if res.collection {
		h.list(w, r, who, res)
		return
	}
	c, err := consistency(r.URL.Query())
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	name := res.name
	docs, _, err := h.engine.BatchGet(r.Context(), who, []string{name}, c)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	doc := docs[0]
	if doc == nil {
		httpjson.Error(w, errs.New(errs.NotFound, "Document \""+name+"\" not found."))
		return
	}
	writeJSON(w, firestore.Mask(doc, fieldMask(r.URL.Query(), "mask")))
}

func cutVerb(rest string) (target, verb string, ok bool) {
	i := strings.LastIndex(rest, ":")
	if i < 0 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

func decode(data []byte, m proto.Message) error { return requestJSON.Decode(data, m) }

// decodeCommit decodes a commit body, with the verify writes of the JS
// SDK's transactions, which protojson drops.
func decodeCommit(body []byte, req *pb.CommitRequest) ([]*pb.Write, error) {
	if err := decode(body, req); err != nil {
		return nil, err
	}
	if err := firestore.RestoreVerifies(body, req.GetWrites()); err != nil {
		return nil, err
	}
	return req.GetWrites(), nil
}

func writeJSON(w http.ResponseWriter, m proto.Message) {
	data, err := protojson.Marshal(m)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(data)
}

func writeArray(w http.ResponseWriter, ms []proto.Message) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	var b strings.Builder
	b.WriteString("[")
	for i, m := range ms {
		data, err := protojson.Marshal(m)
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		if i > 0 {
			b.WriteString(",\n")
		}
		b.Write(data)
	}
	b.WriteString("]")
	_, _ = w.Write([]byte(b.String()))
}

// pipelineError answers a pipeline's error; an analyzed pipeline's lists
// the explain stats of what ran in error.details, as gRPC's status
// details carry them.
func pipelineError(w http.ResponseWriter, err error) {
	var se *pipeline.StatsError
	if !errors.As(err, &se) {
		httpjson.Error(w, err)
		return
	}
	detail, aerr := anypb.New(se.Stats)
	if aerr != nil {
		httpjson.Error(w, err)
		return
	}
	body, _ := protojson.Marshal(detail)
	_, name, code := errs.KindOf(err).Status()
	httpjson.Write(w, code, map[string]any{"error": map[string]any{"code": code, "message": err.Error(), "status": name, "details": []json.RawMessage{body}}})
}

// executePipeline answers :executePipeline with the responses as a JSON
// array, as runQuery streams them.
func (h *Handler) executePipeline(ctx context.Context, w http.ResponseWriter, who identity.Principal, db string, req *pb.ExecutePipelineRequest) {
	c := firestore.ConsistencyOf(req.GetTransaction(), req.GetReadTime())
	if opts := req.GetNewTransaction(); opts != nil {
		id, err := h.engine.BeginTransaction(db, opts)
		if err != nil {
			httpjson.Error(w, err)
			return
		}
		c = firestore.Consistency{Transaction: id}
	}
	auto := req.GetNewTransaction() != nil && req.GetAutoCommitTransaction()
	res, err := pipeline.Execute(ctx, h.engine, who, pipeline.Request{Database: db, Pipeline: req.GetStructuredPipeline(), Consistency: c, AutoCommit: auto})
	if err != nil {
		pipelineError(w, err)
		return
	}
	if auto && !res.Committed {
		if _, err := h.engine.Commit(ctx, who, db, nil, c.Transaction); err != nil {
			httpjson.Error(w, err)
			return
		}
	}
	var out []proto.Message
	for _, resp := range res.Responses(c.Transaction, req.GetNewTransaction() != nil) {
		out = append(out, resp)
	}
	writeArray(w, out)
}
