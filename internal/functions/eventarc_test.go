package functions_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// startWithCustomEvents runs loupe serve with args and a Node.js codebase
// whose onCustomEventPublished function "shipped" (type
// com.loupe.order.shipped on the default channel, filter warehouse=eu)
// appends what it got to the returned file.
func startWithCustomEvents(t *testing.T, args ...string) (*loupetest.Instance, string) {
	return startNodeCodebase(t, func(seen string) string {
		return `const { appendFileSync } = require('node:fs');
const { onCustomEventPublished } = require('firebase-functions/v2/eventarc');
exports.shipped = onCustomEventPublished({ eventType: 'com.loupe.order.shipped', filters: { warehouse: 'eu' } },
  async (e) => appendFileSync(` + "`" + seen + "`" + `, JSON.stringify({ id: e.id, subject: e.subject, source: e.source,
    time: e.time, datacontenttype: e.datacontenttype, data: e.data }) + '\n'));
`
	}, args...)
}

// event is a CloudEvent in the protobuf JSON form the Admin SDK publishes.
func event(id, warehouse, contentType, text string) map[string]any {
	return map[string]any{
		"@type": "type.googleapis.com/io.cloudevents.v1.CloudEvent", "id": id, "type": "com.loupe.order.shipped",
		"specVersion": "1.0", "source": "orders", "textData": text,
		"attributes": map[string]any{
			"time":            map[string]any{"ceTimestamp": "2026-11-29T10:00:00Z"},
			"datacontenttype": map[string]any{"ceString": contentType},
			"subject":         map[string]any{"ceString": "order-" + id},
			"warehouse":       map[string]any{"ceString": warehouse},
		},
	}
}

// publish posts events to channel path (…/channels/{c}:publishEvents) with
// bearer ("" for none), answering the status and error status.
func publish(t *testing.T, inst *loupetest.Instance, path, bearer string, events ...map[string]any) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"events": events})
	headers := []string{"Content-Type", "application/json"}
	if bearer != "" {
		headers = append(headers, "Authorization", "Bearer "+bearer)
	}
	code, out := loupetest.Call(t, "POST", inst.URL+path, string(body), headers...)
	status := ""
	if e, ok := out["error"].(map[string]any); ok {
		status, _ = e["status"].(string)
	}
	return code, status
}

const defaultChannel = "/projects/demo-loupe/locations/us-central1/channels/firebase:publishEvents"

// TestEventarc_PublishedEventsReachMatchingFunctions: events the Admin SDK
// publishes (firebase-tools' emulator path, and production's /v1 path)
// reach the function whose type, channel and filters they match, as
// CloudEvents with their attributes and their data parsed (JSON) or as
// text; a request with one bad event is INVALID_ARGUMENT and publishes
// nothing of it; another channel or another project's channel reaches no
// function.
func TestEventarc_PublishedEventsReachMatchingFunctions(t *testing.T) {
	inst, seen := startWithCustomEvents(t)
	bad := event("bad", "eu", "application/json", "{not json")
	if code, status := publish(t, inst, defaultChannel, "", event("before-bad", "eu", "application/json", `{"n":0}`), bad); code != 400 || status != "INVALID_ARGUMENT" {
		t.Errorf("a request with JSON textData that does not parse: HTTP %d %s, want 400 INVALID_ARGUMENT", code, status)
	}
	noType := event("no-type", "eu", "text/plain", "x")
	delete(noType, "type")
	if code, status := publish(t, inst, defaultChannel, "", noType); code != 400 || status != "INVALID_ARGUMENT" {
		t.Errorf("an event without a type: HTTP %d %s, want 400 INVALID_ARGUMENT", code, status)
	}
	for path, events := range map[string][]map[string]any{
		"/projects/demo-loupe/locations/us-central1/channels/other:publishEvents": {event("other-channel", "eu", "text/plain", "x")},
		"/projects/another/locations/us-central1/channels/firebase:publishEvents": {event("other-project", "eu", "text/plain", "x")},
		defaultChannel: {event("us", "us", "text/plain", "x")},
	} {
		if code, status := publish(t, inst, path, "", events...); code != 200 {
			t.Errorf("publish to %s: HTTP %d %s", path, code, status)
		}
	}
	if code, status := publish(t, inst, defaultChannel, "", event("json", "eu", "application/json", `{"units":3}`)); code != 200 {
		t.Fatalf("publish: HTTP %d %s", code, status)
	}
	if code, status := publish(t, inst, "/v1"+defaultChannel, "owner", event("text", "eu", "text/plain", "three units")); code != 200 {
		t.Fatalf("publish under /v1: HTTP %d %s", code, status)
	}
	var got map[string]map[string]any
	loupetest.Eventually(t, "both events reach the function", func() bool {
		got = readSeen(t, seen)
		return len(got) >= 2
	})
	want := map[string]map[string]any{
		"json": {"id": "json", "subject": "order-json", "source": "orders", "time": "2026-11-29T10:00:00Z", "datacontenttype": "application/json", "data": map[string]any{"units": float64(3)}},
		"text": {"id": "text", "subject": "order-text", "source": "orders", "time": "2026-11-29T10:00:00Z", "datacontenttype": "text/plain", "data": "three units"},
	}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("the function got\n%s\nwant\n%s", gotJSON, wantJSON)
	}
}

// TestEventarc_StrictNeedsTheAdmin: with --strict-credentials publishing
// needs the admin credential (production needs an OAuth token with
// eventarc.events.publish): nobody, a user and the local owner credential
// get 401 and their event never reaches the function; the admin's does.
func TestEventarc_StrictNeedsTheAdmin(t *testing.T) {
	inst, seen := startWithCustomEvents(t, "--strict-credentials")
	_, user, err := loupetest.SignUp(context.Background(), inst.URL, "mallory@example.com", "secret123")
	if err != nil {
		t.Fatal(err)
	}
	for who, bearer := range map[string]string{"nobody": "", "a user": user, "the local owner credential": "owner"} {
		if code, status := publish(t, inst, defaultChannel, bearer, event("from-"+strings.ReplaceAll(who, " ", "-"), "eu", "text/plain", who)); code != 401 || status != "UNAUTHENTICATED" {
			t.Errorf("publish as %s: HTTP %d %s, want 401 UNAUTHENTICATED", who, code, status)
		}
	}
	if code, status := publish(t, inst, defaultChannel, inst.AdminToken(t), event("admin", "eu", "text/plain", "from the admin")); code != 200 {
		t.Fatalf("publish as the admin: HTTP %d %s", code, status)
	}
	var got map[string]map[string]any
	loupetest.Eventually(t, "the admin's event reaches the function", func() bool {
		got = readSeen(t, seen)
		return len(got) > 0
	})
	if len(got) != 1 || got["admin"] == nil {
		t.Errorf("the function got %v, want only the admin's event", got)
	}
}

// readSeen reads the function's lines, by event id.
func readSeen(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	data, _ := os.ReadFile(path)
	out := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out[m["id"].(string)] = m
		}
	}
	return out
}
