// Package restapi serves the Pub/Sub engine's REST API (v1) as the
// official emulator serves it beside gRPC, for curl and HTTP clients:
// topics and subscriptions (PUT to create, GET, PATCH, DELETE, list),
// :publish, :pull, :acknowledge, :modifyAckDeadline, :modifyPushConfig and
// :detach. Each route decodes the JSON body into the gRPC request message
// and calls the gRPC server's method, so both wires answer alike; answers
// are the messages' JSON form, errors Google's REST error body.
package restapi

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/pubsub/grpcapi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// maxBody bounds a request body (a publish may carry 10 MB of messages,
// base64 makes it larger).
const maxBody = 16 << 20

// Mux is where routes are registered (http.ServeMux, server.Mux).
type Mux interface {
	HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request))
}

// Register adds the REST routes to mux, answered by s.
func Register(mux Mux, s *grpcapi.Server) {
	h := handler{s}
	const topic, sub = "/v1/projects/{project}/topics/{topic}", "/v1/projects/{project}/subscriptions/{sub}"
	mux.HandleFunc("PUT "+topic, h.createTopic)
	mux.HandleFunc("GET "+topic, h.getTopic)
	mux.HandleFunc("PATCH "+topic, h.updateTopic)
	mux.HandleFunc("DELETE "+topic, h.deleteTopic)
	mux.HandleFunc("POST "+topic, h.topicVerb)
	mux.HandleFunc("GET /v1/projects/{project}/topics", h.listTopics)
	mux.HandleFunc("GET "+topic+"/subscriptions", h.topicSubscriptions)
	mux.HandleFunc("PUT "+sub, h.createSubscription)
	mux.HandleFunc("GET "+sub, h.getSubscription)
	mux.HandleFunc("PATCH "+sub, h.updateSubscription)
	mux.HandleFunc("DELETE "+sub, h.deleteSubscription)
	mux.HandleFunc("POST "+sub, h.subscriptionVerb)
	mux.HandleFunc("GET /v1/projects/{project}/subscriptions", h.listSubscriptions)
}

type handler struct{ s *grpcapi.Server }

func topicName(r *http.Request) string {
	return "projects/" + r.PathValue("project") + "/topics/" + r.PathValue("topic")
}

func subName(r *http.Request) string {
	return "projects/" + r.PathValue("project") + "/subscriptions/" + r.PathValue("sub")
}

// serve decodes r's body into req, lets fill set what the path says, runs
// call with r's Authorization as gRPC metadata, and writes the answer.
func serve[Req, Resp proto.Message](w http.ResponseWriter, r *http.Request, req Req, fill func(Req), call func(context.Context, Req) (Resp, error)) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "The request body could not be read: "+err.Error()))
		return
	}
	if err := (httpjson.ProtoDecoder{}).Decode(body, req); err != nil {
		httpjson.Error(w, err)
		return
	}
	if fill != nil {
		fill(req)
	}
	ctx := r.Context()
	if a := r.Header.Get("Authorization"); a != "" {
		ctx = metadata.NewIncomingContext(ctx, metadata.Pairs("authorization", a))
	}
	resp, err := call(ctx, req)
	if err != nil {
		writeStatus(w, err)
		return
	}
	out, err := protojson.Marshal(resp)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(out)
}

// httpOf are the HTTP statuses of the gRPC codes errs has no kind of.
var httpOf = map[codes.Code]int{codes.Unimplemented: 501, codes.Canceled: 499, codes.DeadlineExceeded: 504}

// kinds are errs' kinds by their gRPC code.
var kinds = func() map[codes.Code]errs.Kind {
	out := map[codes.Code]errs.Kind{}
	for k := errs.Internal; k <= errs.Unavailable; k++ {
		code, _, _ := k.Status()
		out[codes.Code(code)] = k
	}
	return out
}()

// writeStatus answers a gRPC status error as Google's REST error body.
func writeStatus(w http.ResponseWriter, err error) {
	st := status.Convert(err)
	if k, ok := kinds[st.Code()]; ok {
		httpjson.Error(w, errs.New(k, st.Message()))
		return
	}
	code, ok := httpOf[st.Code()]
	if !ok {
		code = http.StatusInternalServerError
	}
	name := strings.ToUpper(strings.ReplaceAll(st.Code().String(), "Canceled", "Cancelled"))
	if st.Code() == codes.DeadlineExceeded {
		name = "DEADLINE_EXCEEDED"
	}
	httpjson.Write(w, code, map[string]any{"error": map[string]any{"code": code, "message": st.Message(), "status": name}})
}

// verb splits "{id}:{verb}" off the last path segment's value.
func verb(v string) (id, method string) {
	i := strings.LastIndexByte(v, ':')
	if i < 0 {
		return v, ""
	}
	return v[:i], v[i+1:]
}

// noMethod is the front end's answer for a verb the resource lacks.
func noMethod(w http.ResponseWriter, r *http.Request) {
	httpjson.Error(w, errs.Errorf(errs.NotFound, "Method not found: %s %s", r.Method, r.URL.Path))
}

// page reads pageSize and pageToken, refusing other parameters.
func page(r *http.Request) (int32, string, error) {
	q := r.URL.Query()
	if err := httpjson.CheckParameters(q, "pageSize", "pageToken"); err != nil {
		return 0, "", err
	}
	size := 0
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, "", errs.Errorf(errs.InvalidArgument, "Invalid value at 'page_size' (TYPE_INT32), %q", v)
		}
		size = n
	}
	return int32(size), q.Get("pageToken"), nil
}

func (h handler) createTopic(w http.ResponseWriter, r *http.Request) {
	serve(w, r, &pb.Topic{}, func(t *pb.Topic) { t.Name = topicName(r) }, h.s.CreateTopic)
}

func (h handler) getTopic(w http.ResponseWriter, r *http.Request) {
	serve(w, r, &pb.GetTopicRequest{}, func(q *pb.GetTopicRequest) { q.Topic = topicName(r) }, h.s.GetTopic)
}

func (h handler) updateTopic(w http.ResponseWriter, r *http.Request) {
	serve(w, r, &pb.UpdateTopicRequest{}, func(q *pb.UpdateTopicRequest) {
		if q.Topic == nil {
			q.Topic = &pb.Topic{}
		}
		q.Topic.Name = topicName(r)
		q.UpdateMask = snakeMask(q.UpdateMask)
	}, h.s.UpdateTopic)
}

func (h handler) deleteTopic(w http.ResponseWriter, r *http.Request) {
	serve(w, r, &pb.DeleteTopicRequest{}, func(q *pb.DeleteTopicRequest) { q.Topic = topicName(r) }, h.s.DeleteTopic)
}

func (h handler) topicVerb(w http.ResponseWriter, r *http.Request) {
	id, method := verb(r.PathValue("topic"))
	if method != "publish" {
		noMethod(w, r)
		return
	}
	name := "projects/" + r.PathValue("project") + "/topics/" + id
	serve(w, r, &pb.PublishRequest{}, func(q *pb.PublishRequest) { q.Topic = name }, h.s.Publish)
}

func (h handler) listTopics(w http.ResponseWriter, r *http.Request) {
	size, token, err := page(r)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	serve(w, r, &pb.ListTopicsRequest{}, func(q *pb.ListTopicsRequest) {
		q.Project, q.PageSize, q.PageToken = "projects/"+r.PathValue("project"), size, token
	}, h.s.ListTopics)
}

func (h handler) topicSubscriptions(w http.ResponseWriter, r *http.Request) {
	size, token, err := page(r)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	serve(w, r, &pb.ListTopicSubscriptionsRequest{}, func(q *pb.ListTopicSubscriptionsRequest) {
		q.Topic, q.PageSize, q.PageToken = topicName(r), size, token
	}, h.s.ListTopicSubscriptions)
}

func (h handler) createSubscription(w http.ResponseWriter, r *http.Request) {
	serve(w, r, &pb.Subscription{}, func(s *pb.Subscription) { s.Name = subName(r) }, h.s.CreateSubscription)
}

func (h handler) getSubscription(w http.ResponseWriter, r *http.Request) {
	serve(w, r, &pb.GetSubscriptionRequest{}, func(q *pb.GetSubscriptionRequest) { q.Subscription = subName(r) }, h.s.GetSubscription)
}

func (h handler) updateSubscription(w http.ResponseWriter, r *http.Request) {
	serve(w, r, &pb.UpdateSubscriptionRequest{}, func(q *pb.UpdateSubscriptionRequest) {
		if q.Subscription == nil {
			q.Subscription = &pb.Subscription{}
		}
		q.Subscription.Name = subName(r)
		q.UpdateMask = snakeMask(q.UpdateMask)
	}, h.s.UpdateSubscription)
}

func (h handler) deleteSubscription(w http.ResponseWriter, r *http.Request) {
	serve(w, r, &pb.DeleteSubscriptionRequest{}, func(q *pb.DeleteSubscriptionRequest) { q.Subscription = subName(r) }, h.s.DeleteSubscription)
}

func (h handler) listSubscriptions(w http.ResponseWriter, r *http.Request) {
	size, token, err := page(r)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	serve(w, r, &pb.ListSubscriptionsRequest{}, func(q *pb.ListSubscriptionsRequest) {
		q.Project, q.PageSize, q.PageToken = "projects/"+r.PathValue("project"), size, token
	}, h.s.ListSubscriptions)
}

func (h handler) subscriptionVerb(w http.ResponseWriter, r *http.Request) {
	id, method := verb(r.PathValue("sub"))
	name := "projects/" + r.PathValue("project") + "/subscriptions/" + id
	switch method {
	case "pull":
		serve(w, r, &pb.PullRequest{}, func(q *pb.PullRequest) { q.Subscription = name }, h.s.Pull)
	case "acknowledge":
		serve(w, r, &pb.AcknowledgeRequest{}, func(q *pb.AcknowledgeRequest) { q.Subscription = name }, h.s.Acknowledge)
	case "modifyAckDeadline":
		serve(w, r, &pb.ModifyAckDeadlineRequest{}, func(q *pb.ModifyAckDeadlineRequest) { q.Subscription = name }, h.s.ModifyAckDeadline)
	case "modifyPushConfig":
		serve(w, r, &pb.ModifyPushConfigRequest{}, func(q *pb.ModifyPushConfigRequest) { q.Subscription = name }, h.s.ModifyPushConfig)
	case "detach":
		serve(w, r, &pb.DetachSubscriptionRequest{}, func(q *pb.DetachSubscriptionRequest) { q.Subscription = name }, h.s.DetachSubscription)
	default:
		noMethod(w, r)
	}
}

// snakeMask turns an update mask's JSON field names ("ackDeadlineSeconds",
// as REST callers write them) into the proto names the engine reads.
func snakeMask(m *fieldmaskpb.FieldMask) *fieldmaskpb.FieldMask {
	if m == nil {
		return nil
	}
	out := &fieldmaskpb.FieldMask{}
	for _, p := range m.Paths {
		var b strings.Builder
		for _, c := range p {
			if c >= 'A' && c <= 'Z' {
				b.WriteByte('_')
				c += 'a' - 'A'
			}
			b.WriteRune(c)
		}
		out.Paths = append(out.Paths, b.String())
	}
	return out
}
