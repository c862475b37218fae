package server

import (
	"bytes"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// frames is the wire form of m cut into pieces of at most 16 KiB, as a
// message arrives in HTTP/2 frames.
func frames(t testing.TB, m proto.Message) mem.BufferSlice {
	t.Helper()
	wire, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out mem.BufferSlice
	for len(wire) > 0 {
		n := min(len(wire), 16<<10)
		out = append(out, mem.SliceBuffer(bytes.Clone(wire[:n])))
		wire = wire[n:]
	}
	return out
}

// TestCodec_UnmarshalJoinsFrames: a message in several frames decodes
// whole, and keeps nothing of the frames (they go back to gRPC's pool).
func TestCodec_UnmarshalJoinsFrames(t *testing.T) {
	want := bytes.Repeat([]byte("0123456789"), 10_000)
	data := frames(t, wrapperspb.Bytes(want))
	if len(data) < 2 {
		t.Fatalf("%d frames", len(data))
	}
	for range 2 { // the second time from a reused buffer
		var got wrapperspb.BytesValue
		if err := newCodec().Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		for _, d := range data {
			clear(d.ReadOnlyData())
		}
		if !bytes.Equal(got.Value, want) {
			t.Fatal("the decoded message differs, or changed with the frames")
		}
		data = frames(t, wrapperspb.Bytes(want))
	}
}

// BenchmarkCodec_Unmarshal100KiB decodes a 100 KiB message that came in
// 16 KiB frames, as a publish of 100 messages of 1 KiB does.
func BenchmarkCodec_Unmarshal100KiB(b *testing.B) {
	data := frames(b, wrapperspb.Bytes(bytes.Repeat([]byte("m"), 100<<10)))
	c := newCodec()
	b.SetBytes(int64(data.Len()))
	for b.Loop() {
		var m wrapperspb.BytesValue
		if err := c.Unmarshal(data, &m); err != nil {
			b.Fatal(err)
		}
	}
}
