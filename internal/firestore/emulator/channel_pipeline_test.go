package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/webchannel"
	"github.com/loupe-dev/loupe/internal/webchannel/wctest"
	"google.golang.org/protobuf/encoding/protojson"
)

// TestListenChannel_RealtimePipeline: the Listen request the JS SDK sends
// for onSnapshot of a realtime pipeline (its target's pipelineQuery, which
// the Target message has no field for) gets the pipeline's documents, then
// their changes.
func TestListenChannel_RealtimePipeline(t *testing.T) {
	c := newChannelServer(t, "", webchannel.Options{})
	c.svc.Engine.SetEditions(map[string]firestore.Edition{"": firestore.EditionEnterprise})
	c.set(t, 1)
	// db.realtimePipeline().collection('fan').where(field('v').greaterThan(0)), as toTarget writes it.
	add := fmt.Sprintf(`{"database":%q,"addTarget":{"pipelineQuery":{"structuredPipeline":{"pipeline":{"stages":[`+
		`{"name":"collection","args":[{"referenceValue":"/fan"}]},`+
		`{"name":"where","args":[{"functionValue":{"name":"greater_than","args":[{"fieldReferenceValue":"v"},{"integerValue":"0"}]}}]}`+
		`]}}},"targetId":2}}`, testDB)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client, err := wctest.Open(ctx, http.DefaultClient, c.url, http.Header{"X-Goog-Api-Client": {"gl-js/ fire/12"}}, []byte(add))
	if err != nil {
		t.Fatal(err)
	}
	responses := make(chan *pb.ListenResponse, 64)
	done := make(chan error, 1)
	go func() {
		done <- client.Stream(ctx, func(msg json.RawMessage) {
			r := &pb.ListenResponse{}
			if protojson.Unmarshal(msg, r) == nil {
				responses <- r
			}
		})
	}()
	// nextChange returns the next document change, failing on a removed target.
	nextChange := func() *pb.Document {
		t.Helper()
		for {
			select {
			case r := <-responses:
				if tc := r.GetTargetChange(); tc.GetTargetChangeType() == pb.TargetChange_REMOVE {
					t.Fatalf("target removed: %v", tc.GetCause())
				}
				if d := r.GetDocumentChange(); d != nil {
					return d.GetDocument()
				}
			case err := <-done:
				t.Fatalf("the back channel ended: %v", err)
			case <-time.After(10 * time.Second):
				t.Fatal("no document change")
			}
		}
	}
	if d := nextChange(); d.GetName() != testDB+"/documents/fan/doc" || d.GetFields()["v"].GetIntegerValue() != 1 {
		t.Fatalf("first change: %v, want fan/doc with v=1", d)
	}
	c.set(t, 2)
	if d := nextChange(); d.GetFields()["v"].GetIntegerValue() != 2 {
		t.Fatalf("second change: %v, want v=2", d)
	}
}
