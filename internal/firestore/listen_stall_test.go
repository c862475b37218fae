package firestore_test

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/loupe-dev/loupe/internal/webchannel/wctest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

var long = flag.Bool("long", false, "run the long soaks (20 s of writes under a stalled listener)")

// TestListen_StalledListenerHoldsBoundedMemory: a gRPC Listen stream and a
// WebChannel Listen channel on a hot document whose clients never read
// (a process paused in a debugger) while writers commit 100 KB versions of
// it. loupe's memory stays bounded, and the gRPC listener, once it reads
// again, gets the latest version: the versions in between are coalesced,
// not queued.
func TestListen_StalledListenerHoldsBoundedMemory(t *testing.T) {
	writeFor := 8 * time.Second
	if *long {
		writeFor = 20 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst := loupetest.Start(t, loupetest.Options{Process: true, Args: []string{"--history-budget", "16"}})
	conn, err := grpc.NewClient(inst.Host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewFirestoreClient(conn)
	owner := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer owner")
	name := serveDB + "/documents/hot/doc"
	body := &pb.Value{ValueType: &pb.Value_StringValue{StringValue: strings.Repeat("x", 100_000)}}
	write := func(ctx context.Context, v int64) error {
		_, err := client.Commit(ctx, &pb.CommitRequest{Database: serveDB, Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
			Name: name, Fields: map[string]*pb.Value{"v": {ValueType: &pb.Value_IntegerValue{IntegerValue: v}}, "body": body},
		}}}}})
		return err
	}
	if err := write(owner, 0); err != nil {
		t.Fatal(err)
	}

	// The gRPC listener reads its first snapshot, then stops reading.
	stream, err := client.Listen(owner)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&pb.ListenRequest{Database: serveDB, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{
		TargetId: 1, TargetType: &pb.Target_Documents{Documents: &pb.Target_DocumentsTarget{Documents: []string{name}}},
	}}}); err != nil {
		t.Fatal(err)
	}
	for current := false; !current; {
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		current = resp.GetTargetChange().GetTargetChangeType() == pb.TargetChange_CURRENT
	}

	// The WebChannel listener opens its back channel and never reads it.
	addTarget := fmt.Sprintf(`{"database":%q,"addTarget":{"targetId":1,"documents":{"documents":[%q]}}}`, serveDB, name)
	ch, err := wctest.Open(ctx, http.DefaultClient, inst.URL+"/google.firestore.v1.Firestore/Listen/channel", http.Header{"Authorization": {"Bearer owner"}}, []byte(addTarget))
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.Dial("tcp", inst.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	fmt.Fprintf(back, "GET /google.firestore.v1.Firestore/Listen/channel?VER=8&RID=rpc&CI=0&TYPE=xmlhttp&AID=0&SID=%s HTTP/1.1\r\nHost: %s\r\n\r\n", ch.SID, inst.Host)

	baseline := loupetest.RSSKiB(t, inst.PID())
	var commits atomic.Int64
	var wg sync.WaitGroup
	writeCtx, stop := context.WithTimeout(owner, writeFor)
	defer stop()
	for range 4 {
		wg.Go(func() {
			for writeCtx.Err() == nil {
				if err := write(owner, commits.Add(1)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	peak := baseline
	for writeCtx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
		peak = max(peak, loupetest.RSSKiB(t, inst.PID()))
	}
	wg.Wait()
	if n := commits.Load(); n < 100 {
		t.Fatalf("only %d commits in %v: the writers were starved", n, writeFor)
	}
	final, err := client.GetDocument(owner, &pb.GetDocumentRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	last := final.GetFields()["v"].GetIntegerValue()
	// 20 s of 100 KB commits queued for one listener is gigabytes; the
	// history's budget (16 MiB), the channel's window and the collector's
	// slack are what may stay.
	if grown := (peak - baseline) / 1024; grown > 200 {
		t.Errorf("loupe grew by %d MiB over %d commits of 100 KB with a stalled listener (RSS %d → %d MiB)", grown, commits.Load(), baseline/1024, peak/1024)
	}
	t.Logf("%d commits; RSS %d MiB before, %d MiB at the peak", commits.Load(), baseline/1024, peak/1024)

	// Reading again, the gRPC listener reaches the latest version.
	deadline := time.AfterFunc(30*time.Second, cancel)
	defer deadline.Stop()
	for {
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("the stalled listener never got the last version (%d): %v", last, err)
		}
		if v := resp.GetDocumentChange().GetDocument().GetFields()["v"].GetIntegerValue(); v == last {
			break
		}
	}
}
