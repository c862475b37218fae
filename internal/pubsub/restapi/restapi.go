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
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxBody bounds a request body (a publish may carry 10 MB of messages,
// base64 makes it larger).
const maxBody = 16 << 20

// Mux is where routes are registered (http.ServeMux, server.Mux).
type Mux interface {
	HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request))
}

// Register adds the REST routes to mux, answered by s. The name a path
// holds is set in the request over what the body says.
func Register(mux Mux, s *grpcapi.Server) {
	const topics, subs = "/v1/projects/{project}/topics", "/v1/projects/{project}/subscriptions"
	type route = func(http.ResponseWriter, *http.Request)
	for pattern, h := range map[string]route{
		"PUT " + topics + "/{topic}": func(w http.ResponseWriter, r *http.Request) {
			serve(w, r, &pb.Topic{Name: topicName(r)}, s.CreateTopic)
		},
		"GET " + topics + "/{topic}": func(w http.ResponseWriter, r *http.Request) {
			serve(w, r, &pb.GetTopicRequest{Topic: topicName(r)}, s.GetTopic)
		},
		"PATCH " + topics + "/{topic}": func(w http.ResponseWriter, r *http.Request) {
			serve(w, r, &pb.UpdateTopicRequest{Topic: &pb.Topic{Name: topicName(r)}}, s.UpdateTopic)
		},
		"DELETE " + topics + "/{topic}": func(w http.ResponseWriter, r *http.Request) {
			serve(w, r, &pb.DeleteTopicRequest{Topic: topicName(r)}, s.DeleteTopic)
		},
		"POST " + topics + "/{topic}": func(w http.ResponseWriter, r *http.Request) {
			id, method := verb(r.PathValue("topic"))
			if method != "publish" {
				noMethod(w, r)
				return
			}
			serve(w, r, &pb.PublishRequest{Topic: "projects/" + r.PathValue("project") + "/topics/" + id}, s.Publish)
		},
		"GET " + topics: func(w http.ResponseWriter, r *http.Request) {
			list(w, r, &pb.ListTopicsRequest{Project: "projects/" + r.PathValue("project")}, s.ListTopics)
		},
		"GET " + topics + "/{topic}/subscriptions": func(w http.ResponseWriter, r *http.Request) {
			list(w, r, &pb.ListTopicSubscriptionsRequest{Topic: topicName(r)}, s.ListTopicSubscriptions)
		},
		"PUT " + subs + "/{sub}": func(w http.ResponseWriter, r *http.Request) {
			serve(w, r, &pb.Subscription{Name: subName(r)}, s.CreateSubscription)
		},
		"GET " + subs + "/{sub}": func(w http.ResponseWriter, r *http.Request) {
			serve(w, r, &pb.GetSubscriptionRequest{Subscription: subName(r)}, s.GetSubscription)
		},
		"PATCH " + subs + "/{sub}": func(w http.ResponseWriter, r *http.Request) {
			serve(w, r, &pb.UpdateSubscriptionRequest{Subscription: &pb.Subscription{Name: subName(r)}}, s.UpdateSubscription)
		},
		"DELETE " + subs + "/{sub}": func(w http.ResponseWriter, r *http.Request) {
			serve(w, r, &pb.DeleteSubscriptionRequest{Subscription: subName(r)}, s.DeleteSubscription)
		},
		"POST " + subs + "/{sub}": func(w http.ResponseWriter, r *http.Request) { subscriptionVerb(w, r, s) },
		"GET " + subs: func(w http.ResponseWriter, r *http.Request) {
			list(w, r, &pb.ListSubscriptionsRequest{Project: "projects/" + r.PathValue("project")}, s.ListSubscriptions)
		},
	} {
		mux.HandleFunc(pattern, h)
	}
}

func topicName(r *http.Request) string {
	return "projects/" + r.PathValue("project") + "/topics/" + r.PathValue("topic")
}

func subName(r *http.Request) string {
	return "projects/" + r.PathValue("project") + "/subscriptions/" + r.PathValue("sub")
}

// serve decodes r's body into a request of path's type, sets the fields
// path has set (the names the URL holds) over it, runs call with r's
// Authorization as gRPC metadata, and writes the answer.
func serve[Req, Resp proto.Message](w http.ResponseWriter, r *http.Request, path Req, call func(context.Context, Req) (Resp, error)) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "The request body could not be read: "+err.Error()))
		return
	}
	req := path.ProtoReflect().New().Interface().(Req)
	if err := (httpjson.ProtoDecoder{}).Decode(body, req); err != nil {
		httpjson.Error(w, err)
		return
	}
	proto.Merge(req, path)
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

// list serves a list call: the page size and token come from the query.
func list[Req, Resp proto.Message](w http.ResponseWriter, r *http.Request, path Req, call func(context.Context, Req) (Resp, error)) {
	size, token, err := page(r)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	m := path.ProtoReflect()
	fields := m.Descriptor().Fields()
	m.Set(fields.ByName("page_size"), protoreflect.ValueOfInt32(size))
	m.Set(fields.ByName("page_token"), protoreflect.ValueOfString(token))
	serve(w, r, path, call)
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

// subscriptionVerb serves POST …/subscriptions/{id}:{verb}.
func subscriptionVerb(w http.ResponseWriter, r *http.Request, s *grpcapi.Server) {
	id, method := verb(r.PathValue("sub"))
	name := "projects/" + r.PathValue("project") + "/subscriptions/" + id
	switch method {
	case "pull":
		serve(w, r, &pb.PullRequest{Subscription: name}, s.Pull)
	case "acknowledge":
		serve(w, r, &pb.AcknowledgeRequest{Subscription: name}, s.Acknowledge)
	case "modifyAckDeadline":
		serve(w, r, &pb.ModifyAckDeadlineRequest{Subscription: name}, s.ModifyAckDeadline)
	case "modifyPushConfig":
		serve(w, r, &pb.ModifyPushConfigRequest{Subscription: name}, s.ModifyPushConfig)
	case "detach":
		serve(w, r, &pb.DetachSubscriptionRequest{Subscription: name}, s.DetachSubscription)
	default:
		noMethod(w, r)
	}
}
