package restapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// call sends a JSON request to loupe's Pub/Sub REST API and decodes the
// answer into a map; it returns the HTTP status too.
func call(t *testing.T, inst *loupetest.Instance, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, inst.URL+"/v1/projects/demo-loupe/"+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, data, err)
	}
	return resp.StatusCode, out
}

// TestREST_TopicSubscriptionPublishPullAck: the REST calls the official
// emulator answers (curl's way in): a topic and a subscription made with
// PUT, a publish, a pull that hands the message out with its data and
// attributes, an ack after which a pull finds nothing, and Google's error
// body for a missing topic, a taken name and an unknown field.
func TestREST_TopicSubscriptionPublishPullAck(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	if code, topic := call(t, inst, "PUT", "topics/orders", ""); code != 200 || topic["name"] != "projects/demo-loupe/topics/orders" {
		t.Fatalf("create topic: %d %v", code, topic)
	}
	code, sub := call(t, inst, "PUT", "subscriptions/billing", `{"topic": "projects/demo-loupe/topics/orders", "ackDeadlineSeconds": 30}`)
	if code != 200 || sub["ackDeadlineSeconds"] != float64(30) || sub["topic"] != "projects/demo-loupe/topics/orders" {
		t.Fatalf("create subscription: %d %v", code, sub)
	}
	data := base64.StdEncoding.EncodeToString([]byte(`{"order":"o1"}`))
	code, pub := call(t, inst, "POST", "topics/orders:publish", `{"messages": [{"data": "`+data+`", "attributes": {"kind": "new"}}]}`)
	ids, _ := pub["messageIds"].([]any)
	if code != 200 || len(ids) != 1 {
		t.Fatalf("publish: %d %v", code, pub)
	}
	code, pulled := call(t, inst, "POST", "subscriptions/billing:pull", `{"maxMessages": 10}`)
	got, _ := pulled["receivedMessages"].([]any)
	if code != 200 || len(got) != 1 {
		t.Fatalf("pull: %d %v", code, pulled)
	}
	rm := got[0].(map[string]any)
	msg := rm["message"].(map[string]any)
	if msg["data"] != data || msg["messageId"] != ids[0] || msg["attributes"].(map[string]any)["kind"] != "new" || msg["publishTime"] == nil {
		t.Errorf("message = %v", msg)
	}
	ack, _ := json.Marshal(map[string]any{"ackIds": []any{rm["ackId"]}})
	if code, out := call(t, inst, "POST", "subscriptions/billing:acknowledge", string(ack)); code != 200 || len(out) != 0 {
		t.Fatalf("ack: %d %v", code, out)
	}
	// The ack took: a nack would make it deliverable again at once.
	nack, _ := json.Marshal(map[string]any{"ackIds": []any{rm["ackId"]}, "ackDeadlineSeconds": 0})
	call(t, inst, "POST", "subscriptions/billing:modifyAckDeadline", string(nack))
	if code, again := call(t, inst, "POST", "subscriptions/billing:pull", `{"maxMessages": 10, "returnImmediately": true}`); code != 200 || len(again) != 0 {
		t.Fatalf("pull after the ack: %d %v", code, again)
	}
	code, list := call(t, inst, "GET", "topics/orders/subscriptions", "")
	if code != 200 || len(list["subscriptions"].([]any)) != 1 {
		t.Errorf("topic's subscriptions: %d %v", code, list)
	}
	call(t, inst, "PUT", "topics/shipments", "")
	code, first := call(t, inst, "GET", "topics?pageSize=1", "")
	if code != 200 || len(first["topics"].([]any)) != 1 || first["nextPageToken"] == nil {
		t.Fatalf("first page: %d %v", code, first)
	}
	code, rest := call(t, inst, "GET", "topics?pageSize=1&pageToken="+first["nextPageToken"].(string), "")
	if code != 200 || rest["topics"].([]any)[0].(map[string]any)["name"] != "projects/demo-loupe/topics/shipments" {
		t.Fatalf("second page: %d %v", code, rest)
	}
	code, upd := call(t, inst, "PATCH", "subscriptions/billing", `{"subscription": {"ackDeadlineSeconds": 60}, "updateMask": "ackDeadlineSeconds"}`)
	if code != 200 || upd["ackDeadlineSeconds"] != float64(60) {
		t.Errorf("update: %d %v", code, upd)
	}
	for _, c := range []struct {
		method, path, body, status string
		code                       int
	}{
		{"POST", "topics/missing:publish", `{"messages": [{"data": "` + data + `"}]}`, "NOT_FOUND", 404},
		{"PUT", "topics/orders", "", "ALREADY_EXISTS", 409},
		{"PUT", "subscriptions/audit", `{"topic": "projects/demo-loupe/topics/orders", "ackDeadline": 30}`, "INVALID_ARGUMENT", 400},
		{"POST", "topics/orders:explode", "{}", "NOT_FOUND", 404},
	} {
		code, out := call(t, inst, c.method, c.path, c.body)
		e, _ := out["error"].(map[string]any)
		if code != c.code || e["status"] != c.status || e["code"] != float64(c.code) || e["message"] == "" {
			t.Errorf("%s %s: %d %v, want %d %s", c.method, c.path, code, out, c.code, c.status)
		}
	}
}
