package pubsub

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
)

// Pusher posts a push subscription's message to its endpoint and returns
// the HTTP status of the answer (err when none came). The emulator's
// adapter implements it over HTTP.
type Pusher interface {
	Push(ctx context.Context, endpoint string, header map[string]string, body []byte) (status int, err error)
}

// SetPusher installs the pusher; push subscriptions deliver nothing
// without one. Call it before Open's subscriptions are used.
func (e *Engine) SetPusher(p Pusher) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pusher = p
	for _, s := range e.subs {
		if s.stopPush == nil && s.pb.GetPushConfig().GetPushEndpoint() != "" && !s.pb.Detached {
			e.startPushing(s)
		}
	}
}

// pushBatch is how many messages a pusher has out at once (one, in order,
// on a subscription with message ordering).
const pushBatch = 10

// Push backoff without a retry policy: production's push backoff, shortened
// for local work.
const (
	pushMinBackoff = 100 * time.Millisecond
	pushMaxBackoff = 60 * time.Second
)

// startPushing starts s's pusher; e.mu is held.
func (e *Engine) startPushing(s *subscription) {
	if e.pusher == nil || e.closed {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stopPush = cancel
	e.pushers.Add(1)
	go func() {
		defer e.pushers.Done()
		e.push(ctx, s.pb.Name)
	}()
}

// stopPushing ends the subscription's pusher, if any.
func (s *subscription) stopPushing() {
	if s.stopPush != nil {
		s.stopPush()
		s.stopPush = nil
	}
}

// push delivers the subscription's messages to its endpoint until ctx ends.
func (e *Engine) push(ctx context.Context, name string) {
	for ctx.Err() == nil {
		e.mu.Lock()
		s := e.subs[name]
		if s == nil {
			e.mu.Unlock()
			return
		}
		cfg, ordered := s.pb.GetPushConfig(), s.pb.EnableMessageOrdering
		pusher := e.pusher
		e.mu.Unlock()
		batch := pushBatch
		if ordered {
			batch = 1
		}
		got, err := e.Pull(ctx, name, batch, 0, true)
		if err != nil {
			return
		}
		var wg sync.WaitGroup
		for _, r := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.pushOne(ctx, pusher, name, cfg, r)
			}()
		}
		wg.Wait()
	}
}

// pushOne posts one message and acks it on a 2xx answer, else nacks it
// with a backoff.
func (e *Engine) pushOne(ctx context.Context, p Pusher, name string, cfg *pb.PushConfig, r Received) {
	header := map[string]string{}
	var body []byte
	if nw := cfg.GetNoWrapper(); nw != nil {
		body = r.Message.Data
		if nw.WriteMetadata {
			for k, v := range r.Message.Attributes {
				header[k] = v
			}
			header["x-goog-pubsub-message-id"] = r.Message.MessageId
			header["x-goog-pubsub-publish-time"] = r.Message.PublishTime.AsTime().UTC().Format(time.RFC3339Nano)
			header["x-goog-pubsub-subscription-name"] = name
			if r.Message.OrderingKey != "" {
				header["x-goog-pubsub-ordering-key"] = r.Message.OrderingKey
			}
		}
	} else {
		header["Content-Type"] = "application/json"
		msg := PushMessage(r.Message)
		body, _ = json.Marshal(map[string]any{"message": msg, "subscription": name})
	}
	status, err := p.Push(ctx, cfg.GetPushEndpoint(), header, body)
	switch {
	case err == nil && (status == 102 || status == 200 || status == 201 || status == 202 || status == 204):
		_ = e.Acknowledge(name, []string{r.AckID})
	default:
		e.holdBack(name, r.AckID, r.Attempt)
	}
}

// holdBack nacks a push that failed, for the subscription's retry policy's
// backoff or the push backoff.
func (e *Engine) holdBack(name, ack string, attempt int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.subs[name]
	if s == nil {
		return
	}
	id, _, _ := parseAckID(ack)
	p := s.byID[id]
	if p == nil {
		return
	}
	wait := s.backoff(attempt)
	if s.pb.GetRetryPolicy() == nil {
		wait = pushMinBackoff
		for i := 1; i < attempt && wait < pushMaxBackoff; i++ {
			wait *= 2
		}
		wait = min(wait, pushMaxBackoff)
	}
	p.leased = time.Time{}
	p.notBefore = e.now().Add(wait)
	s.wake()
	e.changes.Bump()
}
