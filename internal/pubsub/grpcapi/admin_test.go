package grpcapi_test

import (
	"context"
	"errors"
	"testing"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/loupe-dev/loupe/internal/loupetest/inproc"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// all drains an admin iterator of the Go client.
func all[T any](t *testing.T, next func() (T, error)) []T {
	t.Helper()
	var out []T
	for {
		v, err := next()
		if errors.Is(err, iterator.Done) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
}

// TestGoClient_Admin: the admin calls of the Go client's TopicAdminClient
// and SubscriptionAdminClient, as production answers them: reads, updates
// under a mask (refused without one), listings paged one by one, a push
// config changed and cleared, a detached subscription that refuses pulls,
// and a deleted topic whose subscriptions stay and name "_deleted-topic_".
func TestGoClient_Admin(t *testing.T) {
	c := client(t, serve(t))
	ctx := context.Background()
	setup(t, c, "orders", &pb.Subscription{Name: name("subscriptions", "billing"), AckDeadlineSeconds: 20})
	if _, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pb.Subscription{Name: name("subscriptions", "audit"), Topic: name("topics", "orders")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TopicAdminClient.CreateTopic(ctx, &pb.Topic{Name: name("topics", "shipments")}); err != nil {
		t.Fatal(err)
	}

	if got, err := c.TopicAdminClient.GetTopic(ctx, &pb.GetTopicRequest{Topic: name("topics", "orders")}); err != nil || got.GetName() != name("topics", "orders") {
		t.Errorf("GetTopic = %v, %v", got, err)
	}
	if _, err := c.TopicAdminClient.GetTopic(ctx, &pb.GetTopicRequest{Topic: name("topics", "missing")}); status.Code(err) != codes.NotFound {
		t.Errorf("GetTopic of a missing topic: %v, want NotFound", err)
	}
	upd, err := c.TopicAdminClient.UpdateTopic(ctx, &pb.UpdateTopicRequest{Topic: &pb.Topic{Name: name("topics", "orders"), Labels: map[string]string{"team": "billing"}},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"labels"}}})
	if err != nil || upd.GetLabels()["team"] != "billing" {
		t.Errorf("UpdateTopic = %v, %v", upd, err)
	}
	if _, err := c.TopicAdminClient.UpdateTopic(ctx, &pb.UpdateTopicRequest{Topic: &pb.Topic{Name: name("topics", "orders")}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("UpdateTopic without a mask: %v, want InvalidArgument", err)
	}

	topics := all(t, c.TopicAdminClient.ListTopics(ctx, &pb.ListTopicsRequest{Project: "projects/" + project, PageSize: 1}).Next)
	if len(topics) != 2 || topics[0].GetName() != name("topics", "orders") || topics[1].GetName() != name("topics", "shipments") {
		t.Errorf("ListTopics, a page of one at a time = %v", topics)
	}
	if _, err := c.TopicAdminClient.ListTopics(ctx, &pb.ListTopicsRequest{Project: "nonsense"}).Next(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("ListTopics of a bad project name: %v, want InvalidArgument", err)
	}
	subNames := all(t, c.TopicAdminClient.ListTopicSubscriptions(ctx, &pb.ListTopicSubscriptionsRequest{Topic: name("topics", "orders"), PageSize: 1}).Next)
	if len(subNames) != 2 || subNames[0] != name("subscriptions", "audit") || subNames[1] != name("subscriptions", "billing") {
		t.Errorf("ListTopicSubscriptions = %v", subNames)
	}
	if _, err := c.TopicAdminClient.ListTopicSubscriptions(ctx, &pb.ListTopicSubscriptionsRequest{Topic: name("topics", "missing")}).Next(); status.Code(err) != codes.NotFound {
		t.Errorf("ListTopicSubscriptions of a missing topic: %v, want NotFound", err)
	}
	if snaps := all(t, c.TopicAdminClient.ListTopicSnapshots(ctx, &pb.ListTopicSnapshotsRequest{Topic: name("topics", "orders")}).Next); len(snaps) != 0 {
		t.Errorf("ListTopicSnapshots = %v, want none", snaps)
	}
	if _, err := c.TopicAdminClient.ListTopicSnapshots(ctx, &pb.ListTopicSnapshotsRequest{Topic: name("topics", "missing")}).Next(); status.Code(err) != codes.NotFound {
		t.Errorf("ListTopicSnapshots of a missing topic: %v, want NotFound", err)
	}
	if snaps := all(t, c.SubscriptionAdminClient.ListSnapshots(ctx, &pb.ListSnapshotsRequest{Project: "projects/" + project}).Next); len(snaps) != 0 {
		t.Errorf("ListSnapshots = %v, want none", snaps)
	}

	sub, err := c.SubscriptionAdminClient.GetSubscription(ctx, &pb.GetSubscriptionRequest{Subscription: name("subscriptions", "billing")})
	if err != nil || sub.GetTopic() != name("topics", "orders") || sub.GetAckDeadlineSeconds() != 20 {
		t.Errorf("GetSubscription = %v, %v", sub, err)
	}
	sub, err = c.SubscriptionAdminClient.UpdateSubscription(ctx, &pb.UpdateSubscriptionRequest{
		Subscription: &pb.Subscription{Name: name("subscriptions", "billing"), AckDeadlineSeconds: 45},
		UpdateMask:   &fieldmaskpb.FieldMask{Paths: []string{"ack_deadline_seconds"}}})
	if err != nil || sub.GetAckDeadlineSeconds() != 45 {
		t.Errorf("UpdateSubscription = %v, %v", sub, err)
	}
	if _, err := c.SubscriptionAdminClient.UpdateSubscription(ctx, &pb.UpdateSubscriptionRequest{Subscription: &pb.Subscription{Name: name("subscriptions", "billing")}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("UpdateSubscription without a mask: %v, want InvalidArgument", err)
	}
	subs := all(t, c.SubscriptionAdminClient.ListSubscriptions(ctx, &pb.ListSubscriptionsRequest{Project: "projects/" + project, PageSize: 1}).Next)
	if len(subs) != 2 || subs[0].GetName() != name("subscriptions", "audit") || subs[1].GetName() != name("subscriptions", "billing") {
		t.Errorf("ListSubscriptions = %v", subs)
	}

	if err := c.SubscriptionAdminClient.ModifyPushConfig(ctx, &pb.ModifyPushConfigRequest{Subscription: name("subscriptions", "audit"),
		PushConfig: &pb.PushConfig{PushEndpoint: "http://127.0.0.1:1/push"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.SubscriptionAdminClient.GetSubscription(ctx, &pb.GetSubscriptionRequest{Subscription: name("subscriptions", "audit")}); got.GetPushConfig().GetPushEndpoint() != "http://127.0.0.1:1/push" {
		t.Errorf("after ModifyPushConfig the push config is %v", got.GetPushConfig())
	}
	if err := c.SubscriptionAdminClient.ModifyPushConfig(ctx, &pb.ModifyPushConfigRequest{Subscription: name("subscriptions", "audit"), PushConfig: &pb.PushConfig{}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.SubscriptionAdminClient.GetSubscription(ctx, &pb.GetSubscriptionRequest{Subscription: name("subscriptions", "audit")}); got.GetPushConfig().GetPushEndpoint() != "" {
		t.Errorf("an empty push config leaves %v, want a pull subscription", got.GetPushConfig())
	}

	if _, err := c.TopicAdminClient.DetachSubscription(ctx, &pb.DetachSubscriptionRequest{Subscription: name("subscriptions", "audit")}); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.SubscriptionAdminClient.GetSubscription(ctx, &pb.GetSubscriptionRequest{Subscription: name("subscriptions", "audit")}); !got.GetDetached() {
		t.Errorf("detached subscription = %v", got)
	}
	if _, err := c.SubscriptionAdminClient.Pull(ctx, &pb.PullRequest{Subscription: name("subscriptions", "audit"), MaxMessages: 1}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("pull of a detached subscription: %v, want FailedPrecondition", err)
	}

	if err := c.TopicAdminClient.DeleteTopic(ctx, &pb.DeleteTopicRequest{Topic: name("topics", "orders")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TopicAdminClient.GetTopic(ctx, &pb.GetTopicRequest{Topic: name("topics", "orders")}); status.Code(err) != codes.NotFound {
		t.Errorf("GetTopic after delete: %v, want NotFound", err)
	}
	if got, err := c.SubscriptionAdminClient.GetSubscription(ctx, &pb.GetSubscriptionRequest{Subscription: name("subscriptions", "billing")}); err != nil || got.GetTopic() != "_deleted-topic_" {
		t.Errorf("subscription of a deleted topic = %v, %v, want topic _deleted-topic_", got, err)
	}
	if err := c.SubscriptionAdminClient.DeleteSubscription(ctx, &pb.DeleteSubscriptionRequest{Subscription: name("subscriptions", "billing")}); err != nil {
		t.Fatal(err)
	}
	if err := c.SubscriptionAdminClient.DeleteSubscription(ctx, &pb.DeleteSubscriptionRequest{Subscription: name("subscriptions", "billing")}); status.Code(err) != codes.NotFound {
		t.Errorf("second DeleteSubscription: %v, want NotFound", err)
	}
	if err := c.TopicAdminClient.DeleteTopic(ctx, &pb.DeleteTopicRequest{Topic: name("topics", "orders")}); status.Code(err) != codes.NotFound {
		t.Errorf("second DeleteTopic: %v, want NotFound", err)
	}
}

// TestStrict_AnswersOnlyTheAdmin: with --strict-credentials every call
// needs the admin credential; a call without it, or with a user's ID
// token, is refused with PermissionDenied before it does anything.
func TestStrict_AnswersOnlyTheAdmin(t *testing.T) {
	h := inproc.Start(t, inproc.Options{Only: []string{"pubsub"}, StrictCredentials: true})
	conn, err := grpc.NewClient(serveHarness(t, h), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pub := pb.NewPublisherClient(conn)
	as := func(token string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
	}
	topic := &pb.Topic{Name: name("topics", "locked")}
	for who, ctx := range map[string]context.Context{"no credential": context.Background(), "a user": as(h.UserToken("alice")), "owner": as("owner")} {
		if _, err := pub.CreateTopic(ctx, topic); status.Code(err) != codes.PermissionDenied {
			t.Errorf("CreateTopic as %s: %v, want PermissionDenied", who, err)
		}
	}
	if _, err := pub.GetTopic(as(h.AdminToken()), &pb.GetTopicRequest{Topic: topic.Name}); status.Code(err) != codes.NotFound {
		t.Errorf("a refused create made the topic: GetTopic = %v, want NotFound", err)
	}
	if got, err := pub.CreateTopic(as(h.AdminToken()), topic); err != nil || got.GetName() != topic.Name {
		t.Errorf("CreateTopic as the admin = %v, %v", got, err)
	}
}
