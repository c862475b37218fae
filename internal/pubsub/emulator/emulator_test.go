package emulator_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest/inproc"
)

// pushed is the body production posts to a push endpoint.
type pushed struct {
	Message struct {
		Data       string            `json:"data"`
		Attributes map[string]string `json:"attributes"`
		MessageID  string            `json:"messageId"`
	} `json:"message"`
	Subscription string `json:"subscription"`
}

// TestPush_PostsTheWrappedMessage: a push subscription posts each message
// to its endpoint as JSON, wrapped as production wraps it, and posts it
// again until the endpoint answers 2xx; the console's overview lists the
// topic and its push subscription.
func TestPush_PostsTheWrappedMessage(t *testing.T) {
	h := inproc.Start(t, inproc.Options{Only: []string{"pubsub"}})
	bodies := make(chan pushed, 10)
	var mu sync.Mutex
	calls := 0
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p pushed
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &p); err != nil {
			t.Errorf("push body %s: %v", data, err)
		}
		if r.Method != http.MethodPost || r.URL.Path != "/push" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Errorf("push is %s %s (%s), want a JSON POST to /push", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		bodies <- p
		w.WriteHeader(http.StatusNoContent)
	}))
	defer endpoint.Close()

	const v1 = "/v1/projects/demo-loupe/"
	data := base64.StdEncoding.EncodeToString([]byte("ping"))
	h.Run(t, []inproc.Step{
		{Name: "topic", Method: "PUT", Path: v1 + "topics/hooks", Status: 200},
		{Name: "push subscription", Method: "PUT", Path: v1 + "subscriptions/to-endpoint", Status: 200,
			Body: `{"topic": "projects/demo-loupe/topics/hooks", "pushConfig": {"pushEndpoint": "` + endpoint.URL + `/push"}}`},
	})
	code, out := h.Do("POST", v1+"topics/hooks:publish", "application/json", "", `{"messages": [{"data": "`+data+`", "attributes": {"a": "b"}}]}`)
	var pub struct{ MessageIDs []string }
	if err := json.Unmarshal([]byte(out), &pub); code != 200 || err != nil || len(pub.MessageIDs) != 1 {
		t.Fatalf("publish: %d %s", code, out)
	}
	var p pushed
	select {
	case p = <-bodies:
	case <-time.After(30 * time.Second):
		t.Fatal("nothing was pushed")
	}
	if p.Message.Data != data || p.Message.Attributes["a"] != "b" || p.Message.MessageID != pub.MessageIDs[0] ||
		p.Subscription != "projects/demo-loupe/subscriptions/to-endpoint" {
		t.Errorf("pushed %+v", p)
	}
	mu.Lock()
	if calls != 2 {
		t.Errorf("pushes = %d, want 2 (a 503, then a 204)", calls)
	}
	mu.Unlock()

	code, overview := h.Do("GET", "/emulator/v1/projects/demo-loupe/pubsub", "", h.AdminToken(), "")
	if code != 200 || !strings.Contains(overview, `"name":"projects/demo-loupe/topics/hooks"`) ||
		!strings.Contains(overview, `"pushEndpoint":"`+endpoint.URL+`/push"`) {
		t.Errorf("overview: %d %s", code, overview)
	}
}
