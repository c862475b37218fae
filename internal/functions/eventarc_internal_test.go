package functions

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/loupe-dev/loupe/internal/triggers"
)

// FuzzCustomEvent: whatever a publisher sends as an event, reading it never
// panics, and an event it takes carries JSON data, an id, a type, a time and
// its subject as resource, and can be delivered as a binary-mode CloudEvent.
func FuzzCustomEvent(f *testing.F) {
	f.Add(`{"id":"1","type":"t","specVersion":"1.0","source":"s","textData":"{\"a\":1}","attributes":{"datacontenttype":{"ceString":"application/json"},"time":{"ceTimestamp":"2026-11-29T10:00:00Z"},"subject":{"ceString":"order-1"}}}`)
	f.Add(`{"id":"1","type":"t","specVersion":"1.0","source":"s","binaryData":"aGk=","attributes":{"n":{"ceInteger":3},"b":{"ceBoolean":true}}}`)
	f.Add(`{"id":"1","type":"t","specVersion":"1.0","source":"s","attributes":{"x":{}}}`)
	f.Add(`{"id":"1","type":"t","specVersion":"1.0","source":"s","attributes":{"x y":{"ceString":"a\r\nb"}}}`)
	deliver := binaryDelivery(f)
	f.Fuzz(func(t *testing.T, body string) {
		var ce protoCloudEvent
		if json.Unmarshal([]byte(body), &ce) != nil {
			return
		}
		e, err := customEvent(ce, "p", ChannelInstance("us-central1", "firebase"))
		if err != nil {
			return
		}
		checkTaken(t, body, e, deliver)
	})
}

// FuzzNativeEvent: whatever is published to the native channel, reading
// it never panics, and an event it takes carries JSON data, an id, a type,
// a time and its subject as resource, and can be delivered as a
// binary-mode CloudEvent.
func FuzzNativeEvent(f *testing.F) {
	f.Add(`{"id":"","specVersion":"1.0","type":"google.firebase.firebasealerts.alerts.v1.published","source":"//firebasealerts.googleapis.com/projects/1","time":"2026-11-29T10:00:00Z","alerttype":"crashlytics.newFatalIssue","appid":"1:1:android:a","data":{"payload":{}}}`)
	f.Add(`{"type":"t","data_base64":"aGk=","n":3,"b":true,"z":null,"attributes":{"subject":{"ceString":"s"}}}`)
	f.Add(`{"type":"t","data":1,"data_base64":"aGk="}`)
	f.Add(`{"type":"t","x":{"y":1},"a b":"c","v":"a\u0085b"}`)
	deliver := binaryDelivery(f)
	f.Fuzz(func(t *testing.T, body string) {
		var ce map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &ce) != nil {
			return
		}
		e, err := nativeEvent(ce, "p")
		if err != nil {
			return
		}
		checkTaken(t, body, e, deliver)
	})
}

// binaryDelivery hands events to a server that answers 204 to every
// request, in binary mode as Go functions get them, answering the status.
func binaryDelivery(f *testing.F) func(triggers.Event) (int, error) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	f.Cleanup(srv.Close)
	post := cloudEventPost{url: srv.URL}
	return func(e triggers.Event) (int, error) {
		return post.Deliver(context.Background(), triggers.Trigger{EventType: e.Types[0]}, e)
	}
}

// checkTaken checks the invariants of an event read from body.
func checkTaken(t *testing.T, body string, e triggers.Event, deliver func(triggers.Event) (int, error)) {
	t.Helper()
	if !json.Valid(e.Data) || e.ID == "" || len(e.Types) != 1 || e.Types[0] == "" || e.Time.IsZero() || e.Resource != e.Attributes["subject"] {
		t.Errorf("took %s as %+v", body, e)
	}
	if status, err := deliver(e); err != nil || status != http.StatusNoContent {
		t.Errorf("took %s as %+v, which cannot be delivered: %d %v", body, e, status, err)
	}
}
