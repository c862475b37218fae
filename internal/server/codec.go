package server

import (
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// Encoded is a protobuf message already in its wire form. A gRPC handler
// may send one (stream.SendMsg(server.Encoded(b))) where it would send the
// message: the server writes the bytes as they are, so that a message many
// streams share is encoded once for all of them. The bytes must not change
// afterwards.
type Encoded []byte

// codec is gRPC's protobuf codec, which also sends Encoded messages as they
// are.
type codec struct{ encoding.CodecV2 }

func newCodec() codec { return codec{encoding.GetCodecV2(grpcproto.Name)} }

// Codec is the option a gRPC server needs for its handlers to send Encoded
// messages.
func Codec() grpc.ServerOption { return grpc.ForceServerCodecV2(newCodec()) }

func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	if b, ok := v.(Encoded); ok {
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	return c.CodecV2.Marshal(v)
}

// Unmarshal keeps the wire form of a message received into an *Encoded
// (a proxy's), and decodes any other. A message that came in several
// frames is joined in a buffer of its own size, reused: gRPC's codec joins
// it in a pooled buffer of the next power of two (1 MiB for a 100 KiB
// publish) and clears all of that first.
func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	if b, ok := v.(*Encoded); ok {
		*b = data.Materialize()
		return nil
	}
	m, ok := v.(proto.Message)
	if !ok || len(data) <= 1 {
		return c.CodecV2.Unmarshal(data, v)
	}
	buf := joined.Get().(*[]byte)
	if n := data.Len(); cap(*buf) < n {
		*buf = make([]byte, 0, n)
	}
	b := (*buf)[:0]
	for _, d := range data {
		b = append(b, d.ReadOnlyData()...)
	}
	err := proto.Unmarshal(b, m) // copies what it keeps
	*buf = b
	joined.Put(buf)
	return err
}

// joined are the buffers Unmarshal joins messages in.
var joined = sync.Pool{New: func() any { return new([]byte) }}
