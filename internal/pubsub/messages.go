package pubsub

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/triggers"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// maxPublishBytes bounds a publish request's messages, as production does.
const maxPublishBytes = 10 << 20

// Publish adds messages to a topic and returns their ids, once they are
// durable; every subscription the topic has gets them. Publish keeps msgs
// and sets their ids and publish times: the caller must not use them after.
func (e *Engine) Publish(topicName string, msgs []*pb.PubsubMessage) ([]string, error) {
	if _, _, err := splitName(topicName, "topics"); err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, errs.New(errs.InvalidArgument, "The request contains no messages.")
	}
	size := 0
	for _, m := range msgs {
		if len(m.GetData()) == 0 && len(m.GetAttributes()) == 0 {
			return nil, errs.New(errs.InvalidArgument, "One or more messages in the publish request is empty. Each message must contain either non-empty data, or at least one attribute.")
		}
		size += proto.Size(m)
	}
	if size > maxPublishBytes {
		return nil, errs.Errorf(errs.InvalidArgument, "The value for request_size is too large. You passed %d in the request, but the maximum value is %d.", size, maxPublishBytes)
	}
	e.mu.Lock()
	if e.topics[topicName] == nil {
		e.mu.Unlock()
		return nil, notFound(topicName)
	}
	now := timestamppb.New(e.now())
	first := e.nextID
	e.nextID += int64(len(msgs))
	e.mu.Unlock()
	// The messages get their ids above and are encoded for the log here,
	// outside the lock, so that concurrent publishes encode in parallel
	// and pulls and acks do not wait for it.
	rec := &publishRecord{Topic: topicName, messages: msgs}
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		m.MessageId, m.PublishTime = strconv.FormatInt(first+int64(i), 10), now
		ids[i] = m.MessageId
	}
	var buf *[]byte
	if e.log != nil {
		buf = payloads.Get().(*[]byte)
		// The record's size: the messages, a tag and length each, a few
		// escapes, the topic and the subscriptions' names.
		if n := size + size/64 + 16*len(msgs) + 1024; cap(*buf) < n {
			*buf = make([]byte, 0, n)
		}
		payload, err := appendPublish((*buf)[:0], topicName, msgs)
		if err != nil {
			payloads.Put(buf)
			return nil, errs.Errorf(errs.InvalidArgument, "the message cannot be stored: %v", err)
		}
		*buf = payload
	}
	e.mu.Lock()
	t := e.topics[topicName]
	if t == nil { // deleted meanwhile
		e.mu.Unlock()
		return nil, notFound(topicName)
	}
	rec.Subscriptions = sortedKeys(t.subs)
	var seq uint64
	if e.log != nil {
		*buf = appendSubscriptions(*buf, rec.Subscriptions)
		var err error
		seq, err = e.log.Append(*buf)
		payloads.Put(buf)
		if err != nil {
			e.mu.Unlock()
			return nil, saveError(err)
		}
	}
	e.applyPublish(rec, e.log == nil)
	publisher := e.publisher
	e.mu.Unlock()
	if e.log != nil {
		err := e.log.Wait(seq)
		e.mu.Lock()
		e.settlePublish(rec, err == nil)
		e.mu.Unlock()
		if err != nil {
			return nil, saveError(err)
		}
	}
	if publisher != nil {
		publisher.Publish(events(t.pb.Name, rec.messages)...)
	}
	return ids, nil
}

// payloads are buffers for publishes' records: the log copies a record
// when it is appended, so its buffer serves the next publish.
var payloads = sync.Pool{New: func() any { return new([]byte) }}

// applyPublish adds a publish's messages to the subscriptions it names
// that still exist, deliverable at once when durable; e.mu is held.
func (e *Engine) applyPublish(rec *publishRecord, durable bool) {
	for _, name := range rec.Subscriptions {
		s := e.subs[name]
		if s == nil || s.pb.Detached {
			continue
		}
		for _, m := range rec.messages {
			p := &pending{msg: m, durable: durable}
			s.pending = append(s.pending, p)
			s.byID[m.MessageId] = p
		}
		if durable {
			s.wake()
		}
	}
	if t := e.topics[rec.Topic]; t != nil {
		t.recent = append(t.recent, rec.messages...)
		if n := len(t.recent) - keepRecent; n > 0 {
			t.recent = append([]*pb.PubsubMessage(nil), t.recent[n:]...)
		}
	}
	for _, m := range rec.messages {
		if id, err := strconv.ParseInt(m.MessageId, 10, 64); err == nil && id >= e.nextID {
			e.nextID = id + 1
		}
	}
	e.changes.Bump()
}

// settlePublish makes a publish's messages deliverable once its record is
// durable, or removes them when it could not be written; e.mu is held.
func (e *Engine) settlePublish(rec *publishRecord, durable bool) {
	if t := e.topics[rec.Topic]; t != nil && !durable {
		failed := map[string]bool{}
		for _, m := range rec.messages {
			failed[m.MessageId] = true
		}
		t.recent = slices.DeleteFunc(t.recent, func(m *pb.PubsubMessage) bool { return failed[m.MessageId] })
	}
	for _, name := range rec.Subscriptions {
		s := e.subs[name]
		if s == nil {
			continue
		}
		var failed []string
		for _, m := range rec.messages {
			p := s.byID[m.MessageId]
			if p == nil {
				continue
			}
			if durable {
				p.durable = true
			} else {
				failed = append(failed, m.MessageId)
			}
		}
		s.remove(failed...)
		s.wake()
	}
	e.changes.Bump()
}

// events are the trigger table's events of messages published to topic.
func events(topicName string, msgs []*pb.PubsubMessage) []triggers.Event {
	project, id, _ := splitName(topicName, "topics")
	out := make([]triggers.Event, 0, len(msgs))
	for _, m := range msgs {
		data, _ := json.Marshal(map[string]any{
			"message":      PushMessage(m),
			"subscription": "projects/" + project + "/subscriptions/eventarc-" + id,
		})
		out = append(out, triggers.Event{ID: m.MessageId, Source: triggers.PubSub, Types: []string{triggers.MessagePublished},
			Project: project, Instance: id, Resource: m.MessageId, Time: m.PublishTime.AsTime(), Data: data})
	}
	return out
}

// PushMessage is a message in the JSON form push requests and events carry
// it: data base64, with the ids and times in both spellings production
// sends.
func PushMessage(m *pb.PubsubMessage) map[string]any {
	out := map[string]any{
		"data":        base64.StdEncoding.EncodeToString(m.Data),
		"messageId":   m.MessageId,
		"message_id":  m.MessageId,
		"publishTime": m.PublishTime.AsTime().UTC().Format(time.RFC3339Nano),
	}
	out["publish_time"] = out["publishTime"]
	if len(m.Attributes) > 0 {
		out["attributes"] = maps.Clone(m.Attributes)
	}
	if m.OrderingKey != "" {
		out["orderingKey"] = m.OrderingKey
	}
	return out
}

// remove drops messages from the subscription (ids it does not hold are
// ignored) in one pass over its backlog, however many they are: an ack of
// a thousand messages costs one pass, not a thousand.
func (s *subscription) remove(ids ...string) {
	gone := map[string]bool{}
	for _, id := range ids {
		if s.byID[id] != nil {
			delete(s.byID, id)
			gone[id] = true
		}
	}
	if len(gone) > 0 {
		s.pending = slices.DeleteFunc(s.pending, func(p *pending) bool { return gone[p.msg.MessageId] })
	}
}

// Received is a message handed out by a pull, with the ack id that acks it.
type Received struct {
	AckID   string
	Message *pb.PubsubMessage
	// Attempt is the delivery attempt, from 1.
	Attempt int
}

// maxPullWait bounds how long a pull that waits for messages waits before
// answering none (production answers an empty pull after a while too).
const maxPullWait = 20 * time.Second

// Pull leases up to max deliverable messages of the subscription for
// deadline (the subscription's ack deadline when 0). With wait it blocks
// until at least one is deliverable, ctx ends (its error) or maxPullWait
// passes (no messages).
func (e *Engine) Pull(ctx context.Context, name string, max int, deadline time.Duration, wait bool) ([]Received, error) {
	if _, _, err := splitName(name, "subscriptions"); err != nil {
		return nil, err
	}
	if max <= 0 {
		return nil, errs.New(errs.InvalidArgument, "max_messages must be a positive integer.")
	}
	giveUp := time.NewTimer(maxPullWait)
	defer giveUp.Stop()
	for {
		e.mu.Lock()
		s := e.subs[name]
		if s == nil {
			e.mu.Unlock()
			return nil, notFound(name)
		}
		if s.pb.Detached {
			e.mu.Unlock()
			return nil, errs.New(errs.FailedPrecondition, "Subscription is detached.")
		}
		got, next := e.lease(s, max, deadline)
		ready := s.ready
		e.mu.Unlock()
		if len(got) > 0 || !wait {
			return got, nil
		}
		gaveUp, err := waitFor(ctx, giveUp.C, ready, next)
		if err != nil {
			return nil, err
		}
		if gaveUp {
			return nil, nil
		}
	}
}

// waitFor waits until ready is closed, the time next comes (zero: never),
// giveUp fires (gaveUp) or ctx ends (its error).
func waitFor(ctx context.Context, giveUp <-chan time.Time, ready <-chan struct{}, next time.Time) (gaveUp bool, err error) {
	var later <-chan time.Time
	if !next.IsZero() {
		t := time.NewTimer(time.Until(next))
		defer t.Stop()
		later = t.C
	}
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-giveUp:
		return true, nil
	case <-ready:
	case <-later:
	}
	return false, nil
}

// lease picks up to max deliverable messages of s and leases them; it
// returns them and, when none was deliverable, the time the next lease or
// backoff ends (zero: none). e.mu is held.
func (e *Engine) lease(s *subscription, max int, deadline time.Duration) ([]Received, time.Time) {
	now := e.now()
	if deadline <= 0 {
		deadline = time.Duration(s.pb.AckDeadlineSeconds) * time.Second
	}
	ordered := s.pb.EnableMessageOrdering
	var blocked map[string]bool // ordering keys held back, when ordered
	var got []Received
	var next time.Time
	for _, p := range s.pending {
		if len(got) == max {
			break
		}
		key := p.msg.OrderingKey
		if ordered && key != "" && blocked[key] {
			continue
		}
		held := !p.durable
		for _, until := range []time.Time{p.leased, p.notBefore} {
			if until.After(now) {
				held = true
				if next.IsZero() || until.Before(next) {
					next = until
				}
			}
		}
		if held {
			// A message of a key not yet acked holds back the later ones.
			if ordered && key != "" {
				if blocked == nil {
					blocked = map[string]bool{}
				}
				blocked[key] = true
			}
			continue
		}
		p.deliveries++
		p.leased = now.Add(deadline)
		got = append(got, Received{AckID: ackID(p), Message: p.msg, Attempt: p.deliveries})
	}
	if len(got) > 0 {
		e.changes.Bump()
		e.bumpWhenLeaseEnds(s, now.Add(deadline))
	}
	return got, next
}

// bumpWhenLeaseEnds moves the change counter when the leases of s that end
// at until run out, if any of them is still out then: the console's count
// of leased messages changes with time alone. e.mu is held.
func (e *Engine) bumpWhenLeaseEnds(s *subscription, until time.Time) {
	time.AfterFunc(until.Sub(e.now()), func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.subs[s.pb.Name] != s {
			return
		}
		for _, p := range s.pending {
			if p.leased.Equal(until) {
				e.changes.Bump()
				return
			}
		}
	})
}

// ackID names one delivery of a message: its id and the attempt.
func ackID(p *pending) string { return p.msg.MessageId + "-" + strconv.Itoa(p.deliveries) }

// parseAckID returns the message id and the attempt of an ack id.
func parseAckID(ack string) (id string, attempt int, ok bool) {
	i := strings.LastIndexByte(ack, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(ack[i+1:])
	return ack[:i], n, err == nil
}

// checkAckIDs refuses ack ids loupe did not hand out.
func checkAckIDs(ids []string) error {
	for _, a := range ids {
		if _, _, ok := parseAckID(a); !ok {
			return errs.Errorf(errs.InvalidArgument, "Invalid ack ID: %q.", a)
		}
	}
	return nil
}

// Acknowledge acks the messages of the subscription the ack ids name; an
// ack id of a message already acked, or whose lease was handed to another
// delivery since, is ignored, as production may.
func (e *Engine) Acknowledge(name string, ackIDs []string) error {
	if err := checkAckIDs(ackIDs); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.subs[name]
	if s == nil {
		return notFound(name)
	}
	var acked []string
	for _, a := range ackIDs {
		id, _, _ := parseAckID(a)
		if s.byID[id] != nil {
			acked = append(acked, id)
		}
	}
	if len(acked) > 0 {
		s.remove(acked...)
		e.changes.Bump()
	}
	if len(acked) > 0 && e.log != nil {
		e.appendLazily(record{Ack: &ackRecord{Subscription: name, IDs: acked}})
	}
	return nil
}

// ModifyAckDeadline sets the lease of the deliveries the ack ids name to
// seconds from now (0 to 600); 0 nacks them, making them deliverable again
// (after the retry policy's backoff, when the subscription has one).
func (e *Engine) ModifyAckDeadline(name string, ackIDs []string, seconds int) error {
	if seconds < 0 || seconds > 600 {
		return errs.Errorf(errs.InvalidArgument, "Invalid ack deadline given: %d. The ack deadline must be between 0 and 600 seconds.", seconds)
	}
	if err := checkAckIDs(ackIDs); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.subs[name]
	if s == nil {
		return notFound(name)
	}
	now := e.now()
	changed := false
	for _, a := range ackIDs {
		id, attempt, _ := parseAckID(a)
		p := s.byID[id]
		if p == nil || p.deliveries != attempt || !p.leased.After(now) {
			continue
		}
		changed = true
		if seconds > 0 {
			p.leased = now.Add(time.Duration(seconds) * time.Second)
			continue
		}
		p.leased = time.Time{}
		p.notBefore = now.Add(s.backoff(p.deliveries))
	}
	s.wake()
	if changed {
		e.changes.Bump()
		if seconds > 0 {
			e.bumpWhenLeaseEnds(s, now.Add(time.Duration(seconds)*time.Second))
		}
	}
	return nil
}

// backoff is how long a message nacked after its n-th delivery waits, by
// the subscription's retry policy (none: no wait).
func (s *subscription) backoff(n int) time.Duration {
	rp := s.pb.GetRetryPolicy()
	if rp == nil {
		return 0
	}
	lo, hi := rp.GetMinimumBackoff().AsDuration(), rp.GetMaximumBackoff().AsDuration()
	if rp.MinimumBackoff == nil {
		lo = 10 * time.Second
	}
	if rp.MaximumBackoff == nil {
		hi = 600 * time.Second
	}
	d := lo
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}
