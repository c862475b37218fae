package main

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
)

// pubsubFigures are what the Pub/Sub workload measures, in messages a second.
type pubsubFigures struct {
	publish, pull, endToEnd float64
}

// pubsubWorkload drives the Go Pub/Sub client against the emulator that
// PUBSUB_EMULATOR_HOST names: n messages of size bytes published (each
// result awaited), then received by streaming pull and acked; then n more
// published while a second subscription receives them (end to end).
func pubsubWorkload(ctx context.Context, project string, n, size int) (pubsubFigures, error) {
	var f pubsubFigures
	client, err := pubsub.NewClient(ctx, project)
	if err != nil {
		return f, err
	}
	defer client.Close()
	run := fmt.Sprint(time.Now().UnixNano())
	topic := "projects/" + project + "/topics/peers-" + run
	if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
		return f, fmt.Errorf("create topic: %w", err)
	}
	subscribe := func(name string) (*pubsub.Subscriber, error) {
		full := "projects/" + project + "/subscriptions/" + name + "-" + run
		_, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: full, Topic: topic, AckDeadlineSeconds: 60})
		return client.Subscriber(full), err
	}
	pullSub, err := subscribe("pull")
	if err != nil {
		return f, fmt.Errorf("create subscription: %w", err)
	}
	pub := client.Publisher(topic)
	defer pub.Stop()
	body := bytes.Repeat([]byte("m"), size)
	publish := func() error {
		results := make([]*pubsub.PublishResult, n)
		for i := range results {
			results[i] = pub.Publish(ctx, &pubsub.Message{Data: body})
		}
		for _, r := range results {
			if _, err := r.Get(ctx); err != nil {
				return fmt.Errorf("publish: %w", err)
			}
		}
		return nil
	}
	began := time.Now()
	if err := publish(); err != nil {
		return f, err
	}
	f.publish = float64(n) / time.Since(began).Seconds()

	began = time.Now()
	if err := receive(ctx, pullSub, n); err != nil {
		return f, err
	}
	f.pull = float64(n) / time.Since(began).Seconds()

	e2eSub, err := subscribe("e2e")
	if err != nil {
		return f, fmt.Errorf("create subscription: %w", err)
	}
	began = time.Now()
	received := make(chan error, 1)
	go func() { received <- receive(ctx, e2eSub, n) }()
	if err := publish(); err != nil {
		return f, err
	}
	if err := <-received; err != nil {
		return f, err
	}
	f.endToEnd = float64(n) / time.Since(began).Seconds()
	return f, nil
}

// receive acks messages from sub by streaming pull until n have arrived.
func receive(ctx context.Context, sub *pubsub.Subscriber, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var got atomic.Int64
	err := sub.Receive(ctx, func(_ context.Context, m *pubsub.Message) {
		m.Ack()
		if got.Add(1) == int64(n) {
			cancel()
		}
	})
	if got.Load() < int64(n) {
		return fmt.Errorf("streaming pull: %d of %d messages (%v)", got.Load(), n, err)
	}
	return nil
}
