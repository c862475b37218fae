package pubsub

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"syscall"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/wal"
	"google.golang.org/protobuf/encoding/protojson"
)

// logName is the engine's log in its data folder: one JSON record a line
// (internal/wal). Opening replays it and rewrites it compacted: the
// topics, the subscriptions and the messages not yet acked.
const logName = "pubsub.log"

// record is one change: exactly one field is set.
type record struct {
	Topic              *pb.Topic        `json:"-"`
	DeleteTopic        string           `json:"deleteTopic,omitempty"`
	Subscription       *pb.Subscription `json:"-"`
	DeleteSubscription string           `json:"deleteSubscription,omitempty"`
	Publish            *publishRecord   `json:"publish,omitempty"`
	Ack                *ackRecord       `json:"ack,omitempty"`

	// RawTopic and RawSubscription are Topic and Subscription as protojson.
	RawTopic        json.RawMessage `json:"topic,omitempty"`
	RawSubscription json.RawMessage `json:"subscription,omitempty"`
}

// publishRecord is a publish: its messages, fanned out to the
// subscriptions the topic had.
type publishRecord struct {
	Topic         string            `json:"topic"`
	Subscriptions []string          `json:"subscriptions"`
	Messages      []json.RawMessage `json:"messages"`
	messages      []*pb.PubsubMessage
}

type ackRecord struct {
	Subscription string   `json:"subscription"`
	IDs          []string `json:"ids"`
}

func (r record) encode() ([]byte, error) {
	var err error
	if r.Topic != nil {
		if r.RawTopic, err = protojson.Marshal(r.Topic); err != nil {
			return nil, err
		}
	}
	if r.Subscription != nil {
		if r.RawSubscription, err = protojson.Marshal(r.Subscription); err != nil {
			return nil, err
		}
	}
	if r.Publish != nil {
		return r.Publish.encode()
	}
	return json.Marshal(r)
}

// encodeMessages writes the messages as protojson into Messages, unless
// they are there already.
func (p *publishRecord) encodeMessages() error {
	if p.Messages != nil {
		return nil
	}
	raws := make([]json.RawMessage, len(p.messages))
	for i, m := range p.messages {
		raw, err := protojson.Marshal(m)
		if err != nil {
			return err
		}
		raws[i] = raw
	}
	p.Messages = raws
	return nil
}

// encode is the record of a publish, as json.Marshal writes
// record{Publish: p}, with the messages' protojson copied in as it is
// (one line, no newline) instead of parsed and compacted again.
func (p *publishRecord) encode() ([]byte, error) {
	if err := p.encodeMessages(); err != nil {
		return nil, err
	}
	topic, err := json.Marshal(p.Topic)
	if err != nil {
		return nil, err
	}
	subs, err := json.Marshal(p.Subscriptions)
	if err != nil {
		return nil, err
	}
	n := 64 + len(topic) + len(subs)
	for _, m := range p.Messages {
		n += len(m) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, `{"publish":{"topic":`...)
	out = append(out, topic...)
	out = append(out, `,"subscriptions":`...)
	out = append(out, subs...)
	out = append(out, `,"messages":[`...)
	for i, m := range p.Messages {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m...)
	}
	return append(out, "]}}"...), nil
}

func decode(payload []byte) (record, error) {
	var r record
	if err := json.Unmarshal(payload, &r); err != nil {
		return r, err
	}
	if r.RawTopic != nil {
		r.Topic = &pb.Topic{}
		if err := protojson.Unmarshal(r.RawTopic, r.Topic); err != nil {
			return r, err
		}
	}
	if r.RawSubscription != nil {
		r.Subscription = &pb.Subscription{}
		if err := protojson.Unmarshal(r.RawSubscription, r.Subscription); err != nil {
			return r, err
		}
	}
	if p := r.Publish; p != nil {
		for _, raw := range p.Messages {
			m := &pb.PubsubMessage{}
			if err := protojson.Unmarshal(raw, m); err != nil {
				return r, err
			}
			p.messages = append(p.messages, m)
		}
	}
	return r, nil
}

// apply replays one record; e.mu is held (or the engine is not shared yet).
func (e *Engine) apply(r record) {
	switch {
	case r.Topic != nil:
		e.applyTopic(r.Topic)
	case r.DeleteTopic != "":
		e.applyDeleteTopic(r.DeleteTopic)
	case r.Subscription != nil:
		e.applySubscription(r.Subscription)
	case r.DeleteSubscription != "":
		e.applyDeleteSubscription(r.DeleteSubscription)
	case r.Publish != nil:
		e.applyPublish(r.Publish, true)
	case r.Ack != nil:
		if s := e.subs[r.Ack.Subscription]; s != nil {
			s.remove(r.Ack.IDs...)
		}
	}
}

// openLog replays dir's log into e and compacts it.
func (e *Engine) openLog(dir string) error {
	log, err := wal.Open(filepath.Join(dir, logName), func(payload []byte) error {
		r, err := decode(payload)
		if err != nil {
			return err
		}
		e.apply(r)
		return nil
	})
	if err != nil {
		return err
	}
	e.log = log
	if err := log.Rewrite(e.snapshot()); err != nil {
		log.Close()
		e.log = nil
		return fmt.Errorf("compact: %w", err)
	}
	return nil
}

// snapshot is the records that rebuild e's state: topics, subscriptions,
// then each unacked message with the subscriptions that still hold it.
func (e *Engine) snapshot() [][]byte {
	var recs []record
	for _, name := range sortedKeys(e.topics) {
		recs = append(recs, record{Topic: e.topics[name].pb})
	}
	type held struct {
		msg  *pb.PubsubMessage
		subs []string
	}
	msgs := map[string]*held{}
	for _, name := range sortedKeys(e.subs) {
		s := e.subs[name]
		recs = append(recs, record{Subscription: s.pb})
		for _, p := range s.pending {
			h := msgs[p.msg.MessageId]
			if h == nil {
				h = &held{msg: p.msg}
				msgs[p.msg.MessageId] = h
			}
			h.subs = append(h.subs, name)
		}
	}
	ids := make([]string, 0, len(msgs))
	for id := range msgs {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		x, _ := strconv.ParseInt(a, 10, 64)
		y, _ := strconv.ParseInt(b, 10, 64)
		return int(x - y)
	})
	for _, id := range ids {
		h := msgs[id]
		recs = append(recs, record{Publish: &publishRecord{Subscriptions: h.subs, messages: []*pb.PubsubMessage{h.msg}}})
	}
	out := make([][]byte, 0, len(recs))
	for _, r := range recs {
		payload, err := r.encode()
		if err != nil {
			continue // a message protojson cannot write was never stored either
		}
		out = append(out, payload)
	}
	return out
}

// commit writes r and waits until it is durable; e.mu is held (topic and
// subscription changes are few, and hold publishes back for one sync).
func (e *Engine) commit(r record) error {
	if e.log == nil {
		return nil
	}
	payload, err := r.encode()
	if err != nil {
		return errs.Errorf(errs.InvalidArgument, "the request cannot be stored: %v", err)
	}
	if err := e.log.Commit(payload); err != nil {
		return saveError(err)
	}
	return nil
}

// append queues r and returns the sequence number to wait for.
func (e *Engine) append(r record) (uint64, error) {
	payload, err := r.encode()
	if err != nil {
		return 0, errs.Errorf(errs.InvalidArgument, "the message cannot be stored: %v", err)
	}
	seq, err := e.log.Append(payload)
	if err != nil {
		return 0, saveError(err)
	}
	return seq, nil
}

// appendLazily queues r without waiting for it (acks: one lost to a crash
// is a message delivered again), and has it written soon; e.mu is held.
func (e *Engine) appendLazily(r record) {
	if _, err := e.append(r); err != nil || e.flushing {
		return
	}
	e.flushing = true
	go func() {
		_ = e.log.Flush()
		e.mu.Lock()
		e.flushing = false
		e.mu.Unlock()
	}()
}

// saveError is the error of a change the log could not keep: on a full
// disk RESOURCE_EXHAUSTED, else INTERNAL; neither names a file.
func saveError(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return errs.New(errs.ResourceExhausted, "the disk of loupe's data dir is full; the change was not saved")
	}
	reason := "an I/O error"
	var errno syscall.Errno
	if errors.As(err, &errno) {
		reason = errno.Error()
	}
	return errs.New(errs.Internal, "the change could not be saved: "+reason)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
