package functions_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// startWithCustomEvents runs loupe serve with args and a Node.js codebase
// whose onCustomEventPublished function "shipped" (type
// com.loupe.order.shipped on the default channel, filter warehouse=eu) and
// Crashlytics alert function "fatal" (onNewFatalIssuePublished for the app
// 1:1:android:eu) append what they got to the returned file.
func startWithCustomEvents(t *testing.T, args ...string) (*loupetest.Instance, string) {
	return startNodeCodebase(t, func(seen string) string {
		return `const { appendFileSync } = require('node:fs');
const { onCustomEventPublished } = require('firebase-functions/v2/eventarc');
const { onNewFatalIssuePublished } = require('firebase-functions/v2/alerts/crashlytics');
exports.shipped = onCustomEventPublished({ eventType: 'com.loupe.order.shipped', filters: { warehouse: 'eu' } },
  async (e) => appendFileSync(` + "`" + seen + "`" + `, JSON.stringify({ id: e.id, subject: e.subject, source: e.source,
    time: e.time, datacontenttype: e.datacontenttype, data: e.data }) + '\n'));
exports.fatal = onNewFatalIssuePublished('1:1:android:eu',
  async (e) => appendFileSync(` + "`" + seen + "`" + `, JSON.stringify({ id: e.id, type: e.type, source: e.source, time: e.time,
    alertType: e.alertType, appId: e.appId, issue: e.data.payload.issue.id }) + '\n'));
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

// publish posts events to channel path (…/channels/{c}:publishEvents or
// the native channel) with bearer ("" for none), answering the status and
// error status.
func publish(t *testing.T, inst *loupetest.Instance, path, bearer string, events ...map[string]any) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"events": events})
	return post(t, inst, path, bearer, string(body))
}

// post posts body to path with bearer ("" for none), answering the status
// and error status.
func post(t *testing.T, inst *loupetest.Instance, path, bearer, body string) (int, string) {
	t.Helper()
	headers := []string{"Content-Type", "application/json"}
	if bearer != "" {
		headers = append(headers, "Authorization", "Bearer "+bearer)
	}
	code, out := loupetest.Call(t, "POST", inst.URL+path, body, headers...)
	status := ""
	if e, ok := out["error"].(map[string]any); ok {
		status, _ = e["status"].(string)
	}
	return code, status
}

// alert is a Firebase Alerts CloudEvent in the JSON form firebase-tools'
// native channel takes (attributes at the top level, as in its own
// example), of alertType for the app appID.
func alert(id, alertType, appID string) map[string]any {
	return map[string]any{
		"id": id, "specVersion": "1.0", "type": "google.firebase.firebasealerts.alerts.v1.published",
		"source": "//firebasealerts.googleapis.com/projects/12345", "time": "2026-11-29T10:00:00Z",
		"alerttype": alertType, "appid": appID, "project": "12345",
		"data": map[string]any{
			"@type":      "type.googleapis.com/google.events.firebase.firebasealerts.v1.AlertData",
			"createTime": "2026-11-29T10:00:00Z",
			"payload": map[string]any{
				"@type": "type.googleapis.com/google.events.firebase.firebasealerts.v1.CrashlyticsNewFatalIssuePayload",
				"issue": map[string]any{"id": "issue-" + id, "title": "NullPointerException", "subtitle": "Main.java", "appVersion": "1.0"},
			},
		},
	}
}

// googleChannel is firebase-tools' native channel, where Google's events
// are published.
const googleChannel = "/google/publishEvents"

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
// eventarc.events.publish), to a channel and to the native channel alike:
// nobody, a user and the local owner credential get 401 and their events
// never reach the functions; the admin's do.
func TestEventarc_StrictNeedsTheAdmin(t *testing.T) {
	inst, seen := startWithCustomEvents(t, "--strict-credentials")
	_, user, err := loupetest.SignUp(context.Background(), inst.URL, "mallory@example.com", "secret123")
	if err != nil {
		t.Fatal(err)
	}
	for who, bearer := range map[string]string{"nobody": "", "a user": user, "the local owner credential": "owner"} {
		id := "from-" + strings.ReplaceAll(who, " ", "-")
		if code, status := publish(t, inst, defaultChannel, bearer, event(id, "eu", "text/plain", who)); code != 401 || status != "UNAUTHENTICATED" {
			t.Errorf("publish as %s: HTTP %d %s, want 401 UNAUTHENTICATED", who, code, status)
		}
		if code, status := publish(t, inst, googleChannel, bearer, alert(id+"-alert", "crashlytics.newFatalIssue", "1:1:android:eu")); code != 401 || status != "UNAUTHENTICATED" {
			t.Errorf("publish to the native channel as %s: HTTP %d %s, want 401 UNAUTHENTICATED", who, code, status)
		}
	}
	if code, status := publish(t, inst, defaultChannel, inst.AdminToken(t), event("admin", "eu", "text/plain", "from the admin")); code != 200 {
		t.Fatalf("publish as the admin: HTTP %d %s", code, status)
	}
	if code, status := publish(t, inst, googleChannel, inst.AdminToken(t), alert("admin-alert", "crashlytics.newFatalIssue", "1:1:android:eu")); code != 200 {
		t.Fatalf("publish to the native channel as the admin: HTTP %d %s", code, status)
	}
	var got map[string]map[string]any
	loupetest.Eventually(t, "the admin's events reach the functions", func() bool {
		got = readSeen(t, seen)
		return len(got) >= 2
	})
	if len(got) != 2 || got["admin"] == nil || got["admin-alert"] == nil {
		t.Errorf("the functions got %v, want only the admin's events", got)
	}
}

// TestEventarc_GoogleEventsReachAlertFunctions: Google's events published
// to firebase-tools' native channel (POST /google/publishEvents, JSON
// CloudEvents) reach the Firebase Alerts functions whose alert type and app
// they are, as the SDK reads them (alertType, appId, the alert's payload);
// an event without an id gets one. A body that is not one bounded
// {"events": [CloudEvent, …]}, holds over 10,000 events or an event
// without a type or with an attribute no CloudEvent has, is 400
// INVALID_ARGUMENT and publishes nothing; a custom event there reaches no custom-event function (those
// listen on a channel).
func TestEventarc_GoogleEventsReachAlertFunctions(t *testing.T) {
	inst, seen := startWithCustomEvents(t)
	bad := func(id string, change func(map[string]any)) string {
		e := alert(id, "crashlytics.newFatalIssue", "1:1:android:eu")
		change(e)
		body, _ := json.Marshal(map[string]any{"events": []any{alert("before-"+id, "crashlytics.newFatalIssue", "1:1:android:eu"), e}})
		return string(body)
	}
	for what, body := range map[string]string{
		"an event without a type":        bad("no-type", func(e map[string]any) { delete(e, "type") }),
		"an attribute that is a list":    bad("list", func(e map[string]any) { e["tags"] = []string{"a"} }),
		"an attribute name with a space": bad("space", func(e map[string]any) { e["my tag"] = "x" }),
		"a value with a line break":      bad("newline", func(e map[string]any) { e["subject"] = "a\r\nce-type: forged" }),
		"data and data_base64":           bad("both", func(e map[string]any) { e["data_base64"] = "aGk=" }),
		"a time that is no time":         bad("time", func(e map[string]any) { e["time"] = "yesterday" }),
		"a body cut short":               `{"events": [{"type": "google.firebase.firebasealerts.alerts.v1.published"`,
		"data after the body":            bad("trailing", func(map[string]any) {}) + ` {"events": []}`,
		"events that are not objects":    `{"events": [1]}`,
		"events that are no list":        `{"events": {"type": "t"}}`,
		"10,001 events": `{"events": [` + strings.Repeat(`{"id": "many", "type": "google.firebase.firebasealerts.alerts.v1.published",
			"alerttype": "crashlytics.newFatalIssue", "appid": "1:1:android:eu"},`, 10000) + `{"type": "t"}]}`,
		"a body over 4 MiB": bad("huge", func(e map[string]any) {
			e["data"] = map[string]any{"payload": map[string]any{"issue": map[string]any{"id": strings.Repeat("x", 4<<20)}}}
		}),
	} {
		if code, status := post(t, inst, googleChannel, "", body); code != 400 || status != "INVALID_ARGUMENT" {
			t.Errorf("%s: HTTP %d %s, want 400 INVALID_ARGUMENT", what, code, status)
		}
	}
	noID := alert("", "crashlytics.newFatalIssue", "1:1:android:eu")
	delete(noID, "id")
	if code, status := publish(t, inst, googleChannel, "",
		alert("other-app", "crashlytics.newFatalIssue", "1:1:android:us"),
		alert("other-type", "crashlytics.regression", "1:1:android:eu"),
		map[string]any{"type": "com.loupe.order.shipped", "source": "orders", "warehouse": "eu", "data": "x", "id": "custom"},
		alert("fatal-1", "crashlytics.newFatalIssue", "1:1:android:eu"),
		noID,
	); code != 200 {
		t.Fatalf("publish to the native channel: HTTP %d %s", code, status)
	}
	var got map[string]map[string]any
	loupetest.Eventually(t, "both alerts reach the function", func() bool {
		got = readSeen(t, seen)
		return len(got) >= 2
	})
	want := map[string]any{"id": "fatal-1", "type": "google.firebase.firebasealerts.alerts.v1.published",
		"source": "//firebasealerts.googleapis.com/projects/12345", "time": "2026-11-29T10:00:00Z",
		"alertType": "crashlytics.newFatalIssue", "appId": "1:1:android:eu", "issue": "issue-fatal-1"}
	if gotJSON, wantJSON := mustJSON(got["fatal-1"]), mustJSON(want); gotJSON != wantJSON {
		t.Errorf("the alert function got\n%s\nwant\n%s", gotJSON, wantJSON)
	}
	delete(got, "fatal-1")
	for id, e := range got {
		if len(got) != 1 || len(id) < 16 || e["issue"] != "issue-" {
			t.Errorf("besides fatal-1 the alert function got %v, want only the event without an id, given one", got)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
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

// TestEventarc_GoFunctionsGetCustomEventsAndAlerts: a Go module
// (functions-framework-go) whose triggers.json routes custom events of a
// channel and type with a filter to one function and Crashlytics alerts to
// another gets, as binary-mode CloudEvents, what the Node.js Admin SDK's
// getEventarc().channel().publish() publishes (JSON data as JSON, text as
// its text with its content type) and what is published to the native
// channel, each only when it matches.
func TestEventarc_GoFunctionsGetCustomEventsAndAlerts(t *testing.T) {
	if _, err := os.Stat(filepath.Join(nodeFixtures, "node_modules", "firebase-admin")); err != nil {
		t.Skip("the Node.js fixtures' packages are not installed (make deps)")
	}
	dir := filepath.Join(t.TempDir(), "functions")
	if err := os.CopyFS(dir, os.DirFS("testdata/shipments")); err != nil {
		t.Fatal(err)
	}
	seen := filepath.Join(t.TempDir(), "seen.jsonl")
	cfg := filepath.Join(t.TempDir(), "firebase.json")
	if err := os.WriteFile(cfg, []byte(`{"functions": {"source": "`+dir+`"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{Process: true, InMemory: true, Config: cfg, Env: []string{"SHIPMENTS_SEEN=" + seen}})
	loupetest.WaitForFunctions(t, inst)

	publishWithAdminSDK(t, inst, []map[string]any{
		{"id": "go-json", "type": "com.loupe.order.shipped", "source": "orders", "subject": "order-1",
			"time": "2026-11-29T10:00:00.000Z", "warehouse": "eu", "data": map[string]any{"units": 3}},
		{"id": "go-us", "type": "com.loupe.order.shipped", "source": "orders", "warehouse": "us", "data": map[string]any{}},
		{"id": "go-text", "type": "com.loupe.order.shipped", "source": "orders", "subject": "order-2",
			"time": "2026-11-29T10:00:00.000Z", "warehouse": "eu", "datacontenttype": "text/plain", "data": "three units"},
	})
	if code, status := publish(t, inst, googleChannel, "",
		alert("go-regression", "crashlytics.regression", "1:1:android:eu"),
		alert("go-fatal", "crashlytics.newFatalIssue", "1:1:ios:x"),
	); code != 200 {
		t.Fatalf("publish to the native channel: HTTP %d %s", code, status)
	}
	var got map[string]map[string]any
	loupetest.Eventually(t, "three events reach the Go functions", func() bool {
		got = readSeen(t, seen)
		return len(got) >= 3
	})
	alertData, _ := json.Marshal(alert("go-fatal", "", "")["data"])
	want := map[string]map[string]any{
		"go-json": {"id": "go-json", "type": "com.loupe.order.shipped", "source": "orders", "subject": "order-1",
			"time": "2026-11-29T10:00:00Z", "datacontenttype": "application/json", "data": `{"units":3}`,
			"extensions": map[string]any{"warehouse": "eu"}},
		"go-text": {"id": "go-text", "type": "com.loupe.order.shipped", "source": "orders", "subject": "order-2",
			"time": "2026-11-29T10:00:00Z", "datacontenttype": "text/plain", "data": "three units",
			"extensions": map[string]any{"warehouse": "eu"}},
		"go-fatal": {"id": "go-fatal", "type": "google.firebase.firebasealerts.alerts.v1.published",
			"source": "//firebasealerts.googleapis.com/projects/12345", "subject": "", "time": "2026-11-29T10:00:00Z",
			"datacontenttype": "application/json", "data": string(alertData),
			"extensions": map[string]any{"alerttype": "crashlytics.newFatalIssue", "appid": "1:1:ios:x", "project": "12345"}},
	}
	if gotJSON, wantJSON := mustJSON(got), mustJSON(want); gotJSON != wantJSON {
		t.Errorf("the Go functions got\n%s\nwant\n%s", gotJSON, wantJSON)
	}
}

// publishWithAdminSDK publishes events to the default channel of inst with
// the Node.js Admin SDK's getEventarc(), as a script run by `loupe exec`
// would (CLOUD_EVENTARC_EMULATOR_HOST).
func publishWithAdminSDK(t *testing.T, inst *loupetest.Instance, events []map[string]any) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	script := `const { initializeApp } = require('firebase-admin/app');
const { getEventarc } = require('firebase-admin/eventarc');
const app = initializeApp({ projectId: 'demo-loupe',
  credential: { getAccessToken: async () => ({ access_token: 'owner', expires_in: 3600 }) } });
getEventarc(app).channel().publish(JSON.parse(process.env.EVENTS)).catch((e) => { console.error(e); process.exit(1); });`
	data, _ := json.Marshal(events)
	cmd := exec.Command("node", "-e", script)
	cmd.Dir = nodeFixtures
	cmd.Env = append(os.Environ(), "CLOUD_EVENTARC_EMULATOR_HOST="+inst.URL, "EVENTS="+string(data))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("publish with the Admin SDK: %v\n%s", err, out)
	}
}
