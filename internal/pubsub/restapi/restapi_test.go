package restapi_test

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest/inproc"
)

// call sends a JSON request to loupe's Pub/Sub REST API and decodes the
// answer into a map; it returns the HTTP status too.
func call(t *testing.T, h *inproc.Harness, method, path, body string) (int, map[string]any) {
	t.Helper()
	code, data := h.Do(method, "/v1/projects/demo-loupe/"+path, "application/json", "", body)
	var out map[string]any
	if err := json.Unmarshal([]byte(data), &out); err != nil {
		t.Fatalf("%s %s: %d %s: %v", method, path, code, data, err)
	}
	return code, out
}

// TestREST_TopicSubscriptionPublishPullAck: the REST calls the official
// emulator answers (curl's way in): a topic and a subscription made with
// PUT, a publish, a pull that hands the message out with its data and
// attributes, an ack after which a pull finds nothing, and Google's error
// body for a missing topic, a taken name and an unknown field.
func TestREST_TopicSubscriptionPublishPullAck(t *testing.T) {
	inst := inproc.Start(t, inproc.Options{Only: []string{"pubsub"}})
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

// TestREST_ResourceVerbs: the rest of the REST surface, in order on one
// app: reads, a labels update, the push config set and cleared, a detached
// subscription that refuses pulls, deletes (a subscription outlives its
// topic), and Google's error bodies for what the front end refuses: a bad
// page size, an unknown query parameter, a body that is not JSON, an
// unknown verb.
func TestREST_ResourceVerbs(t *testing.T) {
	h := inproc.Start(t, inproc.Options{Only: []string{"pubsub"}})
	const v1 = "/v1/projects/demo-loupe/"
	h.Run(t, []inproc.Step{
		{Name: "create topic", Method: "PUT", Path: v1 + "topics/tasks", Status: 200},
		{Name: "create subscription", Method: "PUT", Path: v1 + "subscriptions/workers", Body: `{"topic": "projects/demo-loupe/topics/tasks"}`, Status: 200},
		{Name: "create a second subscription", Method: "PUT", Path: v1 + "subscriptions/archive", Body: `{"topic": "projects/demo-loupe/topics/tasks"}`, Status: 200},
		{Name: "get topic", Method: "GET", Path: v1 + "topics/tasks", Status: 200, Contains: []string{`"name":"projects/demo-loupe/topics/tasks"`}},
		{Name: "get missing topic", Method: "GET", Path: v1 + "topics/nope", Status: 404, Contains: []string{`"status":"NOT_FOUND"`}},
		{Name: "update topic labels", Method: "PATCH", Path: v1 + "topics/tasks", Body: `{"topic": {"labels": {"env": "dev"}}, "updateMask": "labels"}`,
			Status: 200, Contains: []string{`"labels":{"env":"dev"}`}},
		{Name: "update topic without a mask", Method: "PATCH", Path: v1 + "topics/tasks", Body: `{"topic": {"labels": {"env": "x"}}}`,
			Status: 400, Contains: []string{`"status":"INVALID_ARGUMENT"`, "update_mask"}},
		{Name: "get subscription", Method: "GET", Path: v1 + "subscriptions/workers", Status: 200, Contains: []string{`"topic":"projects/demo-loupe/topics/tasks"`}},
		{Name: "list subscriptions", Method: "GET", Path: v1 + "subscriptions", Status: 200, Contains: []string{`"name":"projects/demo-loupe/subscriptions/workers"`}},
		{Name: "set push config", Path: v1 + "subscriptions/workers:modifyPushConfig", Body: `{"pushConfig": {"pushEndpoint": "http://127.0.0.1:1/hook"}}`, Status: 200},
		{Name: "push config kept", Method: "GET", Path: v1 + "subscriptions/workers", Status: 200, Contains: []string{`"pushEndpoint":"http://127.0.0.1:1/hook"`}},
		{Name: "clear push config", Path: v1 + "subscriptions/workers:modifyPushConfig", Body: `{"pushConfig": {}}`, Status: 200},
		{Name: "detach", Path: v1 + "subscriptions/workers:detach", Body: `{}`, Status: 200},
		{Name: "detached is shown", Method: "GET", Path: v1 + "subscriptions/workers", Status: 200, Contains: []string{`"detached":true`}},
		{Name: "pull of a detached subscription", Path: v1 + "subscriptions/workers:pull", Body: `{"maxMessages": 1}`,
			Status: 400, Contains: []string{`"status":"FAILED_PRECONDITION"`}},
		{Name: "unknown subscription verb", Path: v1 + "subscriptions/workers:seek", Body: `{}`, Status: 404, Contains: []string{"Method not found"}},
		{Name: "bad page size", Method: "GET", Path: v1 + "topics?pageSize=ten", Status: 400, Contains: []string{"page_size"}},
		{Name: "unknown parameter", Method: "GET", Path: v1 + "subscriptions?color=red", Status: 400, Contains: []string{`"status":"INVALID_ARGUMENT"`, "color"}},
		{Name: "body not JSON", Method: "PUT", Path: v1 + "subscriptions/other", Body: `{"topic": `, Status: 400, Contains: []string{`"status":"INVALID_ARGUMENT"`}},
		{Name: "delete topic", Method: "DELETE", Path: v1 + "topics/tasks", Status: 200},
		{Name: "topic gone", Method: "GET", Path: v1 + "topics/tasks", Status: 404},
		{Name: "subscription outlives its topic", Method: "GET", Path: v1 + "subscriptions/archive", Status: 200, Contains: []string{`"topic":"_deleted-topic_"`}},
		{Name: "delete subscription", Method: "DELETE", Path: v1 + "subscriptions/workers", Status: 200},
		{Name: "delete it again", Method: "DELETE", Path: v1 + "subscriptions/workers", Status: 404, Contains: []string{`"status":"NOT_FOUND"`}},
	})
}

// TestREST_StrictNeedsTheAdmin: in strict mode the REST API, as the gRPC
// one, answers only the admin credential, with Google's 403 body.
func TestREST_StrictNeedsTheAdmin(t *testing.T) {
	h := inproc.Start(t, inproc.Options{Only: []string{"pubsub"}, StrictCredentials: true})
	const topic = "/v1/projects/demo-loupe/topics/locked"
	h.Run(t, []inproc.Step{
		{Name: "no credential", Method: "PUT", Path: topic, Status: 403, Contains: []string{`"status":"PERMISSION_DENIED"`}},
		{Name: "a user", Method: "PUT", Path: topic, Bearer: h.UserToken("alice"), Status: 403, Contains: []string{`"status":"PERMISSION_DENIED"`}},
		{Name: "nothing was made", Method: "GET", Path: topic, Bearer: h.AdminToken(), Status: 404},
		{Name: "the admin", Method: "PUT", Path: topic, Bearer: h.AdminToken(), Status: 200, Contains: []string{`"name":"projects/demo-loupe/topics/locked"`}},
	})
}
