// Package grpcapi serves the Pub/Sub engine as google.pubsub.v1.Publisher
// and google.pubsub.v1.Subscriber over gRPC, as @google-cloud/pubsub and
// cloud.google.com/go/pubsub speak it to PUBSUB_EMULATOR_HOST. It only
// translates: requests become engine calls, engine errors become statuses.
// Snapshots and seek answer Unimplemented.
package grpcapi

import (
	"context"
	"errors"
	"io"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/pubsub"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Server implements the Publisher and Subscriber services over an engine.
type Server struct {
	pb.UnimplementedPublisherServer
	pb.UnimplementedSubscriberServer
	engine *pubsub.Engine
	creds  identity.Credentials
}

// Register adds both services of srv to a gRPC server.
func Register(s *grpc.Server, srv *Server) {
	pb.RegisterPublisherServer(s, srv)
	pb.RegisterSubscriberServer(s, srv)
}

// New is the server of engine e. In strict mode a call must carry the admin
// credential of creds (Pub/Sub is a server API: no user calls it);
// otherwise, as the official emulator, loupe asks for no credential.
func New(e *pubsub.Engine, creds identity.Credentials) *Server {
	return &Server{engine: e, creds: creds}
}

// Status maps an engine error to its gRPC status.
func Status(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return status.Error(codes.Canceled, "the call was cancelled")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return status.Error(codes.DeadlineExceeded, "the call's deadline passed")
	}
	var e *errs.Error
	if !errors.As(err, &e) {
		if _, ok := status.FromError(err); ok {
			return err
		}
	}
	code, _, _ := errs.KindOf(err).Status()
	return status.Error(codes.Code(code), err.Error())
}

// allow checks the caller: anyone in local mode, the admin in strict mode.
func (s *Server) allow(ctx context.Context) error {
	if !s.creds.IsStrict() {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	auth := ""
	if v := md.Get("authorization"); len(v) > 0 {
		auth = v[0]
	}
	p, err := s.creds.Authenticate(auth, "")
	if err != nil || !p.Owner {
		return status.Error(codes.PermissionDenied, "loupe's Pub/Sub answers only the admin credential in strict mode.")
	}
	return nil
}

// page returns the items of a sorted list after token, at most size (0:
// all), and the next token ("" at the end).
func page[T any](items []T, name func(T) string, size int32, token string) ([]T, string) {
	start := sort.Search(len(items), func(i int) bool { return name(items[i]) > token })
	if token == "" {
		start = 0
	}
	items = items[start:]
	if size <= 0 || int(size) >= len(items) {
		return items, ""
	}
	return items[:size], name(items[size-1])
}

// projectOf reads the project of "projects/{project}".
func projectOf(parent string) (string, error) {
	p, ok := strings.CutPrefix(parent, "projects/")
	if !ok || p == "" || strings.Contains(p, "/") {
		return "", status.Errorf(codes.InvalidArgument, "Invalid [projects] name: (name=%s)", parent)
	}
	return p, nil
}

// CreateTopic implements pb.PublisherServer.
func (s *Server) CreateTopic(ctx context.Context, t *pb.Topic) (*pb.Topic, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	out, err := s.engine.CreateTopic(t)
	return out, Status(err)
}

// UpdateTopic implements pb.PublisherServer.
func (s *Server) UpdateTopic(ctx context.Context, req *pb.UpdateTopicRequest) (*pb.Topic, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	out, err := s.engine.UpdateTopic(req.GetTopic(), req.GetUpdateMask().GetPaths())
	return out, Status(err)
}

// Publish implements pb.PublisherServer.
func (s *Server) Publish(ctx context.Context, req *pb.PublishRequest) (*pb.PublishResponse, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	ids, err := s.engine.Publish(req.GetTopic(), req.GetMessages())
	if err != nil {
		return nil, Status(err)
	}
	return &pb.PublishResponse{MessageIds: ids}, nil
}

// GetTopic implements pb.PublisherServer.
func (s *Server) GetTopic(ctx context.Context, req *pb.GetTopicRequest) (*pb.Topic, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	out, err := s.engine.GetTopic(req.GetTopic())
	return out, Status(err)
}

// ListTopics implements pb.PublisherServer.
func (s *Server) ListTopics(ctx context.Context, req *pb.ListTopicsRequest) (*pb.ListTopicsResponse, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	project, err := projectOf(req.GetProject())
	if err != nil {
		return nil, err
	}
	topics, next := page(s.engine.ListTopics(project), (*pb.Topic).GetName, req.GetPageSize(), req.GetPageToken())
	return &pb.ListTopicsResponse{Topics: topics, NextPageToken: next}, nil
}

// ListTopicSubscriptions implements pb.PublisherServer.
func (s *Server) ListTopicSubscriptions(ctx context.Context, req *pb.ListTopicSubscriptionsRequest) (*pb.ListTopicSubscriptionsResponse, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	names, err := s.engine.TopicSubscriptions(req.GetTopic())
	if err != nil {
		return nil, Status(err)
	}
	names, next := page(names, func(n string) string { return n }, req.GetPageSize(), req.GetPageToken())
	return &pb.ListTopicSubscriptionsResponse{Subscriptions: names, NextPageToken: next}, nil
}

// ListTopicSnapshots implements pb.PublisherServer: loupe keeps no snapshots.
func (s *Server) ListTopicSnapshots(ctx context.Context, req *pb.ListTopicSnapshotsRequest) (*pb.ListTopicSnapshotsResponse, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	if _, err := s.engine.GetTopic(req.GetTopic()); err != nil {
		return nil, Status(err)
	}
	return &pb.ListTopicSnapshotsResponse{}, nil
}

// DeleteTopic implements pb.PublisherServer.
func (s *Server) DeleteTopic(ctx context.Context, req *pb.DeleteTopicRequest) (*emptypb.Empty, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, Status(s.engine.DeleteTopic(req.GetTopic()))
}

// DetachSubscription implements pb.PublisherServer.
func (s *Server) DetachSubscription(ctx context.Context, req *pb.DetachSubscriptionRequest) (*pb.DetachSubscriptionResponse, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	return &pb.DetachSubscriptionResponse{}, Status(s.engine.DetachSubscription(req.GetSubscription()))
}

// CreateSubscription implements pb.SubscriberServer.
func (s *Server) CreateSubscription(ctx context.Context, sub *pb.Subscription) (*pb.Subscription, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	out, err := s.engine.CreateSubscription(sub)
	return out, Status(err)
}

// GetSubscription implements pb.SubscriberServer.
func (s *Server) GetSubscription(ctx context.Context, req *pb.GetSubscriptionRequest) (*pb.Subscription, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	out, err := s.engine.GetSubscription(req.GetSubscription())
	return out, Status(err)
}

// UpdateSubscription implements pb.SubscriberServer.
func (s *Server) UpdateSubscription(ctx context.Context, req *pb.UpdateSubscriptionRequest) (*pb.Subscription, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	out, err := s.engine.UpdateSubscription(req.GetSubscription(), req.GetUpdateMask().GetPaths())
	return out, Status(err)
}

// ListSubscriptions implements pb.SubscriberServer.
func (s *Server) ListSubscriptions(ctx context.Context, req *pb.ListSubscriptionsRequest) (*pb.ListSubscriptionsResponse, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	project, err := projectOf(req.GetProject())
	if err != nil {
		return nil, err
	}
	subs, next := page(s.engine.ListSubscriptions(project), (*pb.Subscription).GetName, req.GetPageSize(), req.GetPageToken())
	return &pb.ListSubscriptionsResponse{Subscriptions: subs, NextPageToken: next}, nil
}

// DeleteSubscription implements pb.SubscriberServer.
func (s *Server) DeleteSubscription(ctx context.Context, req *pb.DeleteSubscriptionRequest) (*emptypb.Empty, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, Status(s.engine.DeleteSubscription(req.GetSubscription()))
}

// ModifyAckDeadline implements pb.SubscriberServer.
func (s *Server) ModifyAckDeadline(ctx context.Context, req *pb.ModifyAckDeadlineRequest) (*emptypb.Empty, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, Status(s.engine.ModifyAckDeadline(req.GetSubscription(), req.GetAckIds(), int(req.GetAckDeadlineSeconds())))
}

// Acknowledge implements pb.SubscriberServer.
func (s *Server) Acknowledge(ctx context.Context, req *pb.AcknowledgeRequest) (*emptypb.Empty, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, Status(s.engine.Acknowledge(req.GetSubscription(), req.GetAckIds()))
}

// Pull implements pb.SubscriberServer: without return_immediately it waits
// for a message (or answers none after a while, as production may).
func (s *Server) Pull(ctx context.Context, req *pb.PullRequest) (*pb.PullResponse, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	//lint:ignore SA1019 deprecated, but clients still send it and production still honours it.
	now := req.GetReturnImmediately()
	got, err := s.engine.Pull(ctx, req.GetSubscription(), int(req.GetMaxMessages()), 0, !now)
	if err != nil {
		return nil, Status(err)
	}
	return &pb.PullResponse{ReceivedMessages: received(got)}, nil
}

// ModifyPushConfig implements pb.SubscriberServer.
func (s *Server) ModifyPushConfig(ctx context.Context, req *pb.ModifyPushConfigRequest) (*emptypb.Empty, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, Status(s.engine.ModifyPushConfig(req.GetSubscription(), req.GetPushConfig()))
}

// ListSnapshots implements pb.SubscriberServer: loupe keeps no snapshots.
func (s *Server) ListSnapshots(ctx context.Context, req *pb.ListSnapshotsRequest) (*pb.ListSnapshotsResponse, error) {
	if err := s.allow(ctx); err != nil {
		return nil, err
	}
	if _, err := projectOf(req.GetProject()); err != nil {
		return nil, err
	}
	return &pb.ListSnapshotsResponse{}, nil
}

// maxStreamBatch bounds the messages of one streaming pull response.
const maxStreamBatch = 1000

// StreamingPull implements pb.SubscriberServer: the first request names
// the subscription and the stream's ack deadline; later ones ack, nack and
// extend leases, and change the deadline. Messages are sent as they
// become deliverable, each response at most max_outstanding_messages.
func (s *Server) StreamingPull(stream pb.Subscriber_StreamingPullServer) error {
	if err := s.allow(stream.Context()); err != nil {
		return err
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	name := first.GetSubscription()
	if name == "" {
		return status.Error(codes.InvalidArgument, "The first StreamingPullRequest must set subscription.")
	}
	if d := first.GetStreamAckDeadlineSeconds(); d < 10 || d > 600 {
		return status.Errorf(codes.InvalidArgument, "Invalid stream_ack_deadline_seconds given: %d. It must be between 10 and 600 seconds.", d)
	}
	sub, err := s.engine.GetSubscription(name)
	if err != nil {
		return Status(err)
	}
	if err := s.settle(name, first); err != nil {
		return err
	}
	var deadline atomic.Int64
	deadline.Store(int64(first.GetStreamAckDeadlineSeconds()))
	batch := maxStreamBatch
	if n := int(first.GetMaxOutstandingMessages()); n > 0 && n < batch {
		batch = n
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		defer cancel()
		for {
			req, err := stream.Recv()
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				ended <- err
				return
			}
			if d := req.GetStreamAckDeadlineSeconds(); d >= 10 && d <= 600 {
				deadline.Store(int64(d))
			}
			if err := s.settle(name, req); err != nil {
				ended <- err
				return
			}
		}
	}()
	props := &pb.StreamingPullResponse_SubscriptionProperties{MessageOrderingEnabled: sub.GetEnableMessageOrdering()}
	for {
		got, err := s.engine.Pull(ctx, name, batch, time.Duration(deadline.Load())*time.Second, true)
		if ctx.Err() != nil {
			return <-ended
		}
		if err != nil {
			return Status(err)
		}
		if len(got) == 0 {
			continue
		}
		if err := stream.Send(&pb.StreamingPullResponse{ReceivedMessages: received(got), SubscriptionProperties: props}); err != nil {
			return err
		}
	}
}

// settle applies a streaming pull request's acks and deadline changes.
func (s *Server) settle(name string, req *pb.StreamingPullRequest) error {
	if len(req.GetAckIds()) > 0 {
		if err := s.engine.Acknowledge(name, req.GetAckIds()); err != nil {
			return Status(err)
		}
	}
	ids, secs := req.GetModifyDeadlineAckIds(), req.GetModifyDeadlineSeconds()
	if len(ids) != len(secs) {
		return status.Error(codes.InvalidArgument, "modify_deadline_seconds and modify_deadline_ack_ids must be the same length.")
	}
	for i, id := range ids {
		if err := s.engine.ModifyAckDeadline(name, []string{id}, int(secs[i])); err != nil {
			return Status(err)
		}
	}
	return nil
}

// received turns the engine's deliveries into the wire's.
func received(got []pubsub.Received) []*pb.ReceivedMessage {
	out := make([]*pb.ReceivedMessage, len(got))
	for i, r := range got {
		out[i] = &pb.ReceivedMessage{AckId: r.AckID, Message: r.Message}
	}
	return out
}
