package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/webchannel"
	"github.com/loupe-dev/loupe/internal/webchannel/wctest"
	"google.golang.org/protobuf/encoding/protojson"
)

const testDB = "projects/demo-loupe/databases/(default)"

// channelServer is loupe's Firestore service with its Listen channel on an
// HTTP server, in process.
type channelServer struct {
	svc      *Service
	listen   *webchannel.Handler
	write    *webchannel.Handler
	srv      *httptest.Server
	url      string // of the Listen channel
	writeURL string
}

func newChannelServer(t testing.TB, dataDir string, opts webchannel.Options) *channelServer {
	t.Helper()
	svc, err := New(server.Env{ProjectID: "demo-loupe", DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	c := &channelServer{svc: svc, listen: webchannel.NewHandler(svc.openListen, opts), write: webchannel.NewHandler(svc.openWrite, opts)}
	mux := http.NewServeMux()
	mux.Handle("/google.firestore.v1.Firestore/Listen/channel", c.listen)
	mux.Handle("/google.firestore.v1.Firestore/Write/channel", c.write)
	c.srv = httptest.NewServer(mux)
	c.url = c.srv.URL + "/google.firestore.v1.Firestore/Listen/channel"
	c.writeURL = c.srv.URL + "/google.firestore.v1.Firestore/Write/channel"
	t.Cleanup(c.stop)
	return c
}

// stop ends the channels, the HTTP server and the engine, like a loupe exit.
func (c *channelServer) stop() {
	c.listen.Close()
	c.write.Close()
	c.srv.CloseClientConnections()
	c.srv.Close()
	_ = c.svc.Close()
}

// set writes {v: n} to fan/doc from outside any channel.
func (c *channelServer) set(t testing.TB, n int) {
	t.Helper()
	w := &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{
		Name:   testDB + "/documents/fan/doc",
		Fields: map[string]*pb.Value{"v": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(n)}}},
	}}}
	if _, err := c.svc.Engine.Commit(context.Background(), identity.Owner, testDB, []*pb.Write{w}, nil); err != nil {
		t.Fatal(err)
	}
}

// addTarget is the ListenRequest the JS SDK sends for onSnapshot(doc(db, "fan/doc")).
func addTarget(resumeToken []byte) []byte {
	t := &pb.Target{TargetId: 2, TargetType: &pb.Target_Documents{
		Documents: &pb.Target_DocumentsTarget{Documents: []string{testDB + "/documents/fan/doc"}},
	}}
	if resumeToken != nil {
		t.ResumeType = &pb.Target_ResumeToken{ResumeToken: resumeToken}
	}
	return marshal(&pb.ListenRequest{Database: testDB, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: t}})
}

// seen is a value of v a tab received, and when.
type seen struct {
	v  int64
	at time.Time
}

// tab is one browser tab listening to fan/doc over WebChannel.
type tab struct {
	client  *wctest.Client
	values  chan seen // each value of v the listener saw
	current chan []byte
	token   atomic.Pointer[[]byte] // the latest resume token
	done    chan error
	cancel  context.CancelFunc
}

// openTab opens a channel listening to fan/doc and waits until its target
// is CURRENT; the tab's back channel ends when the test does.
func openTab(t testing.TB, channelURL string, hc *http.Client, resumeToken []byte) *tab {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	client, err := wctest.Open(ctx, hc, channelURL, http.Header{"X-Goog-Api-Client": {"gl-js/ fire/12"}}, addTarget(resumeToken))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	tb := &tab{client: client, values: make(chan seen, 1024), current: make(chan []byte, 16), done: make(chan error, 1), cancel: cancel}
	t.Cleanup(cancel)
	go func() {
		tb.done <- client.Stream(ctx, func(msg json.RawMessage) {
			r := &pb.ListenResponse{}
			if err := protojson.Unmarshal(msg, r); err != nil {
				return // "noop" keep-alives
			}
			if d := r.GetDocumentChange(); d != nil {
				tb.values <- seen{d.GetDocument().GetFields()["v"].GetIntegerValue(), time.Now()}
			}
			tc := r.GetTargetChange()
			if len(tc.GetResumeToken()) > 0 {
				tb.token.Store(&tc.ResumeToken)
			}
			if tc.GetTargetChangeType() == pb.TargetChange_CURRENT {
				tb.current <- tc.GetResumeToken()
			}
		})
	}()
	select {
	case <-tb.current:
	case err := <-tb.done:
		t.Fatalf("the back channel ended before the target was current: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the target never became current")
	}
	return tb
}

// next waits for the next value of v the tab sees.
func (tb *tab) next(t testing.TB) int64 { return tb.nextSeen(t).v }

func (tb *tab) nextSeen(t testing.TB) seen {
	t.Helper()
	select {
	case s := <-tb.values:
		return s
	case err := <-tb.done:
		t.Fatalf("the back channel ended: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no document change")
	}
	return seen{}
}

func TestListenChannel_DeliversCommitsToEveryTab(t *testing.T) {
	c := newChannelServer(t, "", webchannel.Options{})
	c.set(t, 1)
	tabs := []*tab{openTab(t, c.url, http.DefaultClient, nil), openTab(t, c.url, http.DefaultClient, nil)}
	for i, tb := range tabs {
		if v := tb.next(t); v != 1 {
			t.Errorf("tab %d first saw v=%d, want 1", i, v)
		}
	}
	c.set(t, 2)
	for i, tb := range tabs {
		if v := tb.next(t); v != 2 {
			t.Errorf("tab %d then saw v=%d, want 2", i, v)
		}
	}
}

// TestListenChannel_SurvivesRestart: after loupe restarts on the same data
// dir, the old session is unknown (400 Unknown SID, on which the SDK opens a
// new channel), and the new channel's target with the resume token from
// before the restart is served and gets later commits.
func TestListenChannel_SurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	before := newChannelServer(t, dir, webchannel.Options{})
	before.set(t, 1)
	old := openTab(t, before.url, http.DefaultClient, nil)
	old.next(t)
	before.set(t, 2)
	old.next(t)
	token := old.token.Load()
	if token == nil {
		t.Fatal("no resume token before the restart")
	}
	old.cancel()
	before.stop()

	after := newChannelServer(t, dir, webchannel.Options{})
	stale := *old.client
	stale.URL = after.url
	err := stale.Stream(context.Background(), func(json.RawMessage) {})
	if err == nil || !strings.Contains(err.Error(), "status 400") || !strings.Contains(err.Error(), "Unknown SID") {
		t.Errorf("back channel of a session from before the restart: %v, want 400 Unknown SID", err)
	}
	if err := stale.Send(context.Background(), addTarget(nil)); err == nil || !strings.Contains(err.Error(), "Unknown SID") {
		t.Errorf("forward map of a session from before the restart: %v, want 400 Unknown SID", err)
	}
	resumed := openTab(t, after.url, http.DefaultClient, *token)
	after.set(t, 3)
	// A reset resends v=2 first; a true resume sends only what changed.
	for v := resumed.next(t); v != 3; v = resumed.next(t) {
		if v != 2 {
			t.Fatalf("the resumed target saw v=%d, want 2 (the data dir's value) or 3", v)
		}
	}
}

// TestListenChannel_ClosedTabsLeaveNoGoroutines: tabs that close without
// terminating expire, and their Listen streams end with them.
func TestListenChannel_ClosedTabsLeaveNoGoroutines(t *testing.T) {
	c := newChannelServer(t, "", webchannel.Options{Expiry: 200 * time.Millisecond})
	hc := &http.Client{Transport: &http.Transport{}}
	c.set(t, 1)
	baseline := runtime.NumGoroutine()
	var tabs []*tab
	for range 20 {
		tabs = append(tabs, openTab(t, c.url, hc, nil))
	}
	if c.listen.Sessions() != 20 {
		t.Fatalf("%d sessions, want 20", c.listen.Sessions())
	}
	for _, tb := range tabs {
		tb.cancel()
		<-tb.done
	}
	hc.CloseIdleConnections()
	c.srv.CloseClientConnections()
	deadline := time.Now().Add(10 * time.Second)
	for c.listen.Sessions() > 0 || runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d sessions and %d goroutines left (baseline %d):\n%s", c.listen.Sessions(), runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestChannels_UndecodableRequestEndsTheStream: a message that is not the
// stream's request gets the error the SDK closes the stream with.
func TestChannels_UndecodableRequestEndsTheStream(t *testing.T) {
	c := newChannelServer(t, "", webchannel.Options{})
	for _, tc := range []struct {
		name, url, first string
	}{
		{"Listen", c.url, `{"database":"` + testDB + `","addTarget":5}`},
		{"Write", c.writeURL, `{"database":"` + testDB + `","writes":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			client, err := wctest.Open(ctx, http.DefaultClient, tc.url, nil, []byte(tc.first))
			if err != nil {
				t.Fatal(err)
			}
			// The stream's context is cancelled only by the deadline, so the
			// select below cannot pick a cancellation that races the answer.
			got := make(chan string, 1)
			go func() {
				_ = client.Stream(ctx, func(msg json.RawMessage) {
					if strings.Contains(string(msg), `"error"`) {
						select {
						case got <- string(msg):
						default:
						}
					}
				})
			}()
			select {
			case msg := <-got:
				var e struct {
					Error struct {
						Code            int
						Status, Message string
					}
				}
				if err := json.Unmarshal([]byte(msg), &e); err != nil || e.Error.Code != 3 || e.Error.Status != "INVALID_ARGUMENT" || !strings.Contains(e.Error.Message, "Invalid JSON payload") {
					t.Errorf("error message %s, want code 3 INVALID_ARGUMENT", msg)
				}
			case <-ctx.Done():
				t.Fatal("no error on the back channel")
			}
		})
	}
}

// TestWriteChannel_HandshakeThenWrites: the Write stream as the JS SDK
// runs it over WebChannel: the handshake (a request with only the
// database) is answered with a stream id and token; a write sent with the
// token is answered with its result and commit time, and the document is
// committed.
func TestWriteChannel_HandshakeThenWrites(t *testing.T) {
	c := newChannelServer(t, "", webchannel.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := wctest.Open(ctx, http.DefaultClient, c.writeURL, http.Header{"X-Goog-Api-Client": {"gl-js/ fire/12"}},
		marshal(&pb.WriteRequest{Database: testDB}))
	if err != nil {
		t.Fatal(err)
	}
	msgs := make(chan json.RawMessage, 16)
	go func() { _ = client.Stream(ctx, func(m json.RawMessage) { msgs <- m }) }()
	next := func() *pb.WriteResponse {
		t.Helper()
		for {
			select {
			case m := <-msgs:
				if strings.Contains(string(m), `"error"`) {
					t.Fatalf("error on the write stream: %s", m)
				}
				r := &pb.WriteResponse{}
				if err := protojson.Unmarshal(m, r); err == nil {
					return r
				}
			case <-ctx.Done():
				t.Fatal("no answer on the write stream")
			}
		}
	}
	hs := next()
	if hs.GetStreamId() == "" || len(hs.GetStreamToken()) == 0 || len(hs.GetWriteResults()) != 0 {
		t.Fatalf("handshake answer %v, want a stream id and token and no results", hs)
	}
	doc := testDB + "/documents/notes/n1"
	w := &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: doc,
		Fields: map[string]*pb.Value{"text": {ValueType: &pb.Value_StringValue{StringValue: "hi"}}}}}}
	if err := client.Send(ctx, marshal(&pb.WriteRequest{StreamToken: hs.GetStreamToken(), Writes: []*pb.Write{w}})); err != nil {
		t.Fatal(err)
	}
	res := next()
	if len(res.GetWriteResults()) != 1 || res.GetCommitTime() == nil || len(res.GetStreamToken()) == 0 {
		t.Fatalf("write answer %v, want one result, a commit time and a token", res)
	}
	got, err := c.svc.Engine.Get(context.Background(), identity.Owner, doc)
	if err != nil || got.GetFields()["text"].GetStringValue() != "hi" {
		t.Fatalf("committed document = %v, %v", got, err)
	}
}
