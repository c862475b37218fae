package functions

import (
	"encoding/json"
	"testing"
)

// FuzzCustomEvent: whatever a publisher sends as an event, reading it never
// panics, and an event it takes carries JSON data, an id, a type and a time.
func FuzzCustomEvent(f *testing.F) {
	f.Add(`{"id":"1","type":"t","specVersion":"1.0","source":"s","textData":"{\"a\":1}","attributes":{"datacontenttype":{"ceString":"application/json"},"time":{"ceTimestamp":"2026-11-29T10:00:00Z"}}}`)
	f.Add(`{"id":"1","type":"t","specVersion":"1.0","source":"s","binaryData":"aGk=","attributes":{"n":{"ceInteger":3},"b":{"ceBoolean":true}}}`)
	f.Add(`{"id":"1","type":"t","specVersion":"1.0","source":"s","attributes":{"x":{}}}`)
	f.Fuzz(func(t *testing.T, body string) {
		var ce protoCloudEvent
		if json.Unmarshal([]byte(body), &ce) != nil {
			return
		}
		e, err := customEvent(ce, "p", ChannelInstance("us-central1", "firebase"))
		if err != nil {
			return
		}
		if !json.Valid(e.Data) || e.ID == "" || len(e.Types) != 1 || e.Types[0] == "" || e.Time.IsZero() {
			t.Errorf("took %s as %+v", body, e)
		}
	})
}
