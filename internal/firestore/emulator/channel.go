package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/firestore/pipeline"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/webchannel"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

var decodeJSON = protojson.UnmarshalOptions{DiscardUnknown: true}

// channelPrincipal reads the caller from the handshake's init headers, for
// the database the JS SDK names in its URL parameters (or its resource
// prefix header); a bad token is treated as no caller (rules then decide).
func (s *Service) channelPrincipal(h http.Header, q url.Values) identity.Principal {
	db := q.Get("database")
	if db == "" {
		db = h.Get("Google-Cloud-Resource-Prefix")
	}
	p, err := s.env.Credentials.Authenticate(h.Get("Authorization"), firestore.ProjectOf(db))
	if err != nil {
		return identity.Principal{}
	}
	return p
}

func marshal(m proto.Message) []byte {
	data, err := protojson.Marshal(m)
	if err != nil {
		return []byte(`{}`)
	}
	return data
}

// channelError is the message that ends a stream with err's status, as
// Firestore sends it over WebChannel; the SDK closes the stream with it.
func channelError(err error) []byte {
	code, name, _ := errs.KindOf(err).Status()
	data, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": err.Error(), "status": name}})
	return data
}

// invalidRequest is the error for a message that does not decode as the
// request the stream carries.
func invalidRequest(err error) error {
	return errs.New(errs.InvalidArgument, "Invalid JSON payload received. "+err.Error())
}

// listenChannel carries a Listen stream over WebChannel; a request that
// does not decode ends it with INVALID_ARGUMENT.
type listenChannel struct {
	ls     *firestore.ListenStream
	engine *firestore.Engine
	caller identity.Principal
	send   func([]byte)
	failed bool
}

func (c *listenChannel) Receive(msg []byte) {
	if c.failed {
		return
	}
	req := &pb.ListenRequest{}
	err := decodeJSON.Unmarshal(msg, req)
	var sp *pb.StructuredPipeline
	if err == nil {
		sp, err = pipelineTarget(msg)
	}
	if err != nil {
		c.failed = true
		c.send(channelError(invalidRequest(err)))
		return
	}
	if sp != nil {
		c.ls.ReceivePipeline(req, pipeline.Listener(c.engine, c.caller, req.GetDatabase(), sp), pipeline.Scope(sp))
		return
	}
	c.ls.Receive(req)
}

// pipelineTarget decodes the realtime pipeline of a request's
// addTarget.pipelineQuery (what the JS SDK sends for a pipeline listener),
// which the pinned Target message has no field for; nil when there is none.
func pipelineTarget(msg []byte) (*pb.StructuredPipeline, error) {
	if !bytes.Contains(msg, []byte(`"pipelineQuery"`)) {
		return nil, nil
	}
	var r struct {
		AddTarget struct {
			PipelineQuery *struct {
				StructuredPipeline json.RawMessage `json:"structuredPipeline"`
			} `json:"pipelineQuery"`
		} `json:"addTarget"`
	}
	if err := json.Unmarshal(msg, &r); err != nil || r.AddTarget.PipelineQuery == nil {
		return nil, err
	}
	sp := &pb.StructuredPipeline{}
	if raw := r.AddTarget.PipelineQuery.StructuredPipeline; len(raw) > 0 {
		if err := decodeJSON.Unmarshal(raw, sp); err != nil {
			return nil, err
		}
	}
	return sp, nil
}

func (c *listenChannel) Close() { c.ls.Close() }

// listenJSON holds the JSON of the Listen responses streams share, so that
// each is encoded once for all channels.
var listenJSON = firestore.Recent[*pb.ListenResponse, []byte]{Max: 128}

func (s *Service) openListen(h http.Header, q url.Values, send func([]byte)) (webchannel.Stream, error) {
	caller := s.channelPrincipal(h, q)
	ls := s.Engine.NewListenStream(caller, func(r *pb.ListenResponse, shared bool) error {
		if shared {
			send(listenJSON.Get(r, func() []byte { return marshal(r) }))
		} else {
			send(marshal(r))
		}
		return nil
	})
	return &listenChannel{ls: ls, engine: s.Engine, caller: caller, send: send}, nil
}

// writeChannel carries a Write stream over WebChannel: each request is
// handled in order as it arrives; a failed one ends the stream with its status.
type writeChannel struct {
	ws     *firestore.WriteStream
	send   func([]byte)
	failed bool
}

func (c *writeChannel) Receive(msg []byte) {
	if c.failed {
		return // after an error the client re-sends on a new stream
	}
	req := &pb.WriteRequest{}
	if err := decodeJSON.Unmarshal(msg, req); err != nil {
		c.fail(invalidRequest(err))
		return
	}
	if err := firestore.RestoreVerifies(msg, req.GetWrites()); err != nil {
		c.fail(err)
		return
	}
	resp, err := c.ws.Handle(context.Background(), req)
	if err != nil {
		c.fail(err)
		return
	}
	if resp != nil {
		c.send(marshal(resp))
	}
}

func (c *writeChannel) fail(err error) {
	c.failed = true
	c.send(channelError(err))
}

func (c *writeChannel) Close() {}

func (s *Service) openWrite(h http.Header, q url.Values, send func([]byte)) (webchannel.Stream, error) {
	return &writeChannel{ws: s.Engine.NewWriteStream(s.channelPrincipal(h, q)), send: send}, nil
}
