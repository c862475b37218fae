package firestore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/loupe-dev/loupe/internal/webchannel/wctest"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// BenchmarkServe_CommitsWithListeners measures durable one-document commits
// from 64 concurrent writers into the collection feed while listeners (four
// in five over gRPC, spread over 8 connections, one in five over
// WebChannel) watch it (loupetest.FanOuts). view=one: every listener
// watches the whole of feed (one target, shared by all), so every commit
// reaches all of them; view=user: each watches its user's slice of it (feed
// where owner == u<i>, as an app's per-user views do), and writes go to
// owners u0…u999 in turn, so a commit reaches at most one listener. Reports
// commits/s (until the last commit is answered) and deliveries/s: the
// documents the listeners received (commits × listeners reached, each
// counted when it arrives) over the time until the last of them arrived.
func BenchmarkServe_CommitsWithListeners(b *testing.B) {
	for _, tc := range loupetest.FanOuts {
		b.Run(tc.Name(), func(b *testing.B) {
			inst := loupetest.Start(b, tc.Options(b))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clients := make([]pb.FirestoreClient, 8)
			for i := range clients {
				clients[i] = dial(b, inst)
			}
			var received atomic.Int64
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2048}}
			b.Cleanup(hc.CloseIdleConnections)
			for i := range tc.Listeners {
				owner := fmt.Sprintf("u%d", i)
				if tc.Shared() {
					owner = ""
				}
				if i%5 == 4 {
					listenChannel(b, ctx, inst, hc, owner, &received)
				} else {
					listenGRPC(b, ctx, clients[i%len(clients)], owner, &received)
				}
			}
			tc.Run(b, "commits/s", &received, func(i int64) error {
				_, err := clients[i%int64(len(clients))].Commit(ctx, &pb.CommitRequest{Database: serveDB, Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
					Name: fmt.Sprintf("%s/documents/feed/w%d", serveDB, i),
					Fields: map[string]*pb.Value{
						"owner": {ValueType: &pb.Value_StringValue{StringValue: fmt.Sprintf("u%d", i%1000)}},
						"n":     {ValueType: &pb.Value_IntegerValue{IntegerValue: i}},
					},
				}}}}})
				return err
			})
		})
	}
}

// feedQuery is feed where owner == owner (the whole of feed for ""), as a
// listen target.
func feedQuery(owner string) *pb.Target {
	q := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "feed"}}}
	if owner != "" {
		q.Where = &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
			Field: &pb.StructuredQuery_FieldReference{FieldPath: "owner"}, Op: pb.StructuredQuery_FieldFilter_EQUAL,
			Value: &pb.Value{ValueType: &pb.Value_StringValue{StringValue: owner}},
		}}}
	}
	return &pb.Target{TargetId: 2, TargetType: &pb.Target_Query{Query: &pb.Target_QueryTarget{Parent: serveDB + "/documents", QueryType: &pb.Target_QueryTarget_StructuredQuery{StructuredQuery: q}}}}
}

// listenGRPC opens a gRPC Listen stream on owner's slice of feed (the whole
// of it for "") and counts the documents it receives, after its first
// snapshot, without decoding them (countingCodec).
func listenGRPC(b *testing.B, ctx context.Context, client pb.FirestoreClient, owner string, received *atomic.Int64) {
	stream, err := client.Listen(ctx, grpc.ForceCodec(countingCodec{}))
	if err != nil {
		b.Fatal(err)
	}
	if err := stream.Send(&pb.ListenRequest{Database: serveDB, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: feedQuery(owner)}}); err != nil {
		b.Fatal(err)
	}
	for current := false; !current; {
		resp, err := stream.Recv()
		if err != nil {
			b.Fatal(err)
		}
		current = resp.GetTargetChange().GetTargetChangeType() == pb.TargetChange_CURRENT
	}
	go func() {
		for {
			resp, err := stream.Recv()
			if err != nil {
				return
			}
			if resp.GetDocumentChange() != nil {
				received.Add(1)
			}
		}
	}()
}

// listenChannel opens a WebChannel Listen channel on owner's slice of feed
// (the whole of it for ""), as the JS SDK in a browser does, and counts the
// documents it receives once it is current by their first bytes.
func listenChannel(b *testing.B, ctx context.Context, inst *loupetest.Instance, hc *http.Client, owner string, received *atomic.Int64) {
	target, err := protojson.Marshal(feedQuery(owner))
	if err != nil {
		b.Fatal(err)
	}
	add := fmt.Sprintf(`{"database":%q,"addTarget":%s}`, serveDB, target)
	ch, err := wctest.Open(ctx, hc, inst.URL+"/google.firestore.v1.Firestore/Listen/channel", http.Header{"Authorization": {"Bearer owner"}}, []byte(add))
	if err != nil {
		b.Fatal(err)
	}
	current := make(chan struct{})
	go func() {
		isCurrent := false
		_ = ch.Stream(ctx, func(msg json.RawMessage) {
			var r struct {
				TargetChange *struct{ TargetChangeType string } `json:"targetChange"`
			}
			if isCurrent {
				if bytes.HasPrefix(msg, documentChangeJSON) {
					received.Add(1)
				}
				return
			}
			if json.Unmarshal(msg, &r) == nil && r.TargetChange != nil && r.TargetChange.TargetChangeType == "CURRENT" {
				isCurrent = true
				close(current)
			}
		})
	}()
	<-current
}

// documentChangeJSON starts a WebChannel Listen message holding a document
// change.
var documentChangeJSON = []byte(`{"documentChange"`)

// countingCodec is the benchmark's gRPC codec for Listen streams: a
// response holding a document change (field 3, its only field, so its
// first byte) is left undecoded, so that the clients sharing the machine
// with loupe count deliveries instead of spending the cores decoding them;
// everything else is protobuf as usual.
type countingCodec struct{}

func (countingCodec) Marshal(v any) ([]byte, error) { return proto.Marshal(v.(proto.Message)) }

func (countingCodec) Unmarshal(data []byte, v any) error {
	if r, ok := v.(*pb.ListenResponse); ok && len(data) > 0 && data[0] == 3<<3|2 {
		r.ResponseType = &pb.ListenResponse_DocumentChange{DocumentChange: &pb.DocumentChange{}}
		return nil
	}
	return proto.Unmarshal(data, v.(proto.Message))
}

func (countingCodec) Name() string { return "proto" }
