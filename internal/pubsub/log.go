package pubsub

import (
	"bytes"
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
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// logName is the engine's log in its data folder (internal/wal): a publish
// is one binary record (below), every other change one JSON record.
// Opening replays it and rewrites it compacted: the topics, the
// subscriptions and the messages not yet acked.
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
	Topic         string   `json:"topic"`
	Subscriptions []string `json:"subscriptions"`
	// Messages are the messages as protojson, in the JSON records of
	// publishes that logs written before publishes were binary hold.
	Messages []json.RawMessage `json:"messages"`
	messages []*pb.PubsubMessage
}

type ackRecord struct {
	Subscription string   `json:"subscription"`
	IDs          []string `json:"ids"`
}

// A publish's record is publishMark, then a protobuf message with the
// fields below (any order; the subscriptions come last, as they are known
// last), with every '\n' byte written as `\n` and every '\\' as `\\`, since a
// record is one line. Messages are in their wire form, not base64 in JSON:
// a 1 KiB message costs a copy, not an encoding.
const (
	publishMark       = 'P'
	fieldTopic        = 1 // string
	fieldMessage      = 2 // bytes: a google.pubsub.v1.PubsubMessage
	fieldSubscription = 3 // string
)

// appendPublish appends the start of a publish's record to dst: the mark,
// the topic and the messages.
func appendPublish(dst []byte, topic string, msgs []*pb.PubsubMessage) ([]byte, error) {
	var wire []byte
	wire = protowire.AppendTag(wire, fieldTopic, protowire.BytesType)
	wire = protowire.AppendString(wire, topic)
	dst = escape(append(dst, publishMark), wire)
	marshal := proto.MarshalOptions{UseCachedSize: true}
	for _, m := range msgs {
		wire = protowire.AppendTag(wire[:0], fieldMessage, protowire.BytesType)
		wire = protowire.AppendVarint(wire, uint64(proto.Size(m)))
		var err error
		if wire, err = marshal.MarshalAppend(wire, m); err != nil {
			return nil, err
		}
		dst = escape(dst, wire)
	}
	return dst, nil
}

// appendSubscriptions ends a publish's record started by appendPublish.
func appendSubscriptions(dst []byte, subs []string) []byte {
	var wire []byte
	for _, s := range subs {
		wire = protowire.AppendTag(wire, fieldSubscription, protowire.BytesType)
		wire = protowire.AppendString(wire, s)
	}
	return escape(dst, wire)
}

// encode is the record of a publish.
func (p *publishRecord) encode() ([]byte, error) {
	out, err := appendPublish(nil, p.Topic, p.messages)
	if err != nil {
		return nil, err
	}
	return appendSubscriptions(out, p.Subscriptions), nil
}

// decodePublish reads a publish's binary record (without its mark).
func decodePublish(escaped []byte) (*publishRecord, error) {
	wire, err := unescape(escaped)
	if err != nil {
		return nil, err
	}
	p := &publishRecord{}
	for len(wire) > 0 {
		num, typ, n := protowire.ConsumeTag(wire)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		wire = wire[n:]
		if typ != protowire.BytesType {
			return nil, fmt.Errorf("publish record: field %d has wire type %d", num, typ)
		}
		v, n := protowire.ConsumeBytes(wire)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		wire = wire[n:]
		switch num {
		case fieldTopic:
			p.Topic = string(v)
		case fieldMessage:
			m := &pb.PubsubMessage{}
			if err := proto.Unmarshal(v, m); err != nil {
				return nil, err
			}
			p.messages = append(p.messages, m)
		case fieldSubscription:
			p.Subscriptions = append(p.Subscriptions, string(v))
		}
	}
	return p, nil
}

// escape appends src to dst with '\n' and '\\' escaped by a '\\'.
func escape(dst, src []byte) []byte {
	nl, bs := bytes.IndexByte(src, '\n'), bytes.IndexByte(src, '\\')
	for nl >= 0 || bs >= 0 {
		i, c := nl, byte('n')
		if nl < 0 || (bs >= 0 && bs < nl) {
			i, c = bs, '\\'
		}
		dst = append(append(dst, src[:i]...), '\\', c)
		src = src[i+1:]
		// Each search starts where the last one found its byte, so the
		// whole costs one pass over src, however many bytes are escaped.
		if c == 'n' {
			nl, bs = bytes.IndexByte(src, '\n'), shift(bs, i+1)
		} else {
			nl, bs = shift(nl, i+1), bytes.IndexByte(src, '\\')
		}
	}
	return append(dst, src...)
}

// shift is index i of a slice once its first n bytes are cut off (-1 stays).
func shift(i, n int) int {
	if i < 0 {
		return i
	}
	return i - n
}

// unescape reverses escape.
func unescape(src []byte) ([]byte, error) {
	i := bytes.IndexByte(src, '\\')
	if i < 0 {
		return src, nil
	}
	out := make([]byte, 0, len(src))
	for ; i >= 0; i = bytes.IndexByte(src, '\\') {
		if i+1 == len(src) || (src[i+1] != 'n' && src[i+1] != '\\') {
			return nil, errors.New("publish record: a bad escape")
		}
		c := byte('\\')
		if src[i+1] == 'n' {
			c = '\n'
		}
		out = append(append(out, src[:i]...), c)
		src = src[i+2:]
	}
	return append(out, src...), nil
}

func (r record) encode() ([]byte, error) {
	if r.Publish != nil {
		return r.Publish.encode()
	}
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
	return json.Marshal(r)
}

func decode(payload []byte) (record, error) {
	var r record
	if len(payload) > 0 && payload[0] == publishMark {
		p, err := decodePublish(payload[1:])
		r.Publish = p
		return r, err
	}
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
			continue // a message that cannot be written was never stored either
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

// appendLazily queues r without waiting for it (acks: one lost to a crash
// is a message delivered again), and has it written soon; e.mu is held.
func (e *Engine) appendLazily(r record) {
	payload, err := r.encode()
	if err != nil {
		return
	}
	if _, err := e.log.Append(payload); err != nil || e.flushing {
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
