package messaging_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/messaging"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/loupe-dev/loupe/internal/loupetest/inproc"
	"google.golang.org/api/option"
)

// setup starts loupe and returns it, an Admin SDK messaging client pointed
// at it, and a token issued as to a browser.
func setup(t *testing.T) (*loupetest.Instance, *messaging.Client, string) {
	t.Helper()
	ctx := context.Background()
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: "demo-loupe"}, option.WithEndpoint(inst.URL+"/v1"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	client, err := app.Messaging(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(inst.URL+"/emulator/v1/projects/demo-loupe/messaging/tokens", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct{ Token string }
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.Token == "" {
		t.Fatalf("issue a token: %v", err)
	}
	return inst, client, tok.Token
}

func TestMessaging_AdminSDKSendsToABrowserStream(t *testing.T) {
	ctx := context.Background()
	inst, client, token := setup(t)

	stream, err := http.Get(inst.URL + "/emulator/v1/projects/demo-loupe/messaging/stream?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	lines := bufio.NewScanner(stream.Body)
	lines.Scan() // ": connected"

	name, err := client.Send(ctx, &messaging.Message{
		Token:        token,
		Notification: &messaging.Notification{Title: "New feedback request", Body: "Sam asked for feedback"},
		Data:         map[string]string{"requestId": "r1"},
		Webpush:      &messaging.WebpushConfig{FCMOptions: &messaging.WebpushFCMOptions{Link: "/requests/r1"}},
	})
	if err != nil || !strings.HasPrefix(name, "projects/demo-loupe/messages/") {
		t.Fatalf("Send = %q, %v", name, err)
	}
	var payload struct {
		Notification struct{ Title, Body string }
		Data         map[string]string
		FcmOptions   struct{ Link string }
	}
	for lines.Scan() {
		if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
			_ = json.Unmarshal([]byte(data), &payload)
			break
		}
	}
	if payload.Notification.Title != "New feedback request" || payload.Data["requestId"] != "r1" || payload.FcmOptions.Link != "/requests/r1" {
		t.Errorf("payload = %+v", payload)
	}

	if _, err := client.Send(ctx, &messaging.Message{Token: "never-issued", Notification: &messaging.Notification{Title: "x"}}); !messaging.IsUnregistered(err) {
		t.Errorf("unknown token: %v, want UNREGISTERED", err)
	}
	if _, err := client.Send(ctx, &messaging.Message{Topic: "news", Token: token}); err == nil {
		t.Error("token and topic together: want INVALID_ARGUMENT")
	}
	if _, err := client.SendDryRun(ctx, &messaging.Message{Token: token}); err != nil {
		t.Errorf("validate_only: %v", err)
	}
	resp, err := http.Get(inst.URL + "/emulator/v1/projects/demo-loupe/messaging/messages")
	if err != nil {
		t.Fatal(err)
	}
	var inbox struct {
		Messages []struct{ Name, Token string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&inbox)
	resp.Body.Close()
	if len(inbox.Messages) != 1 || inbox.Messages[0].Name != name {
		t.Errorf("inbox = %+v (the dry run must not be kept)", inbox)
	}
}

// A page and its service worker each hold a stream for the same token (the
// worker notifies when no page is focused): every stream gets each message,
// and unregistering the token ends them all.
func TestMessaging_EveryStreamOfATokenGetsEachMessage(t *testing.T) {
	ctx := context.Background()
	inst, client, token := setup(t)

	var streams []*bufio.Scanner
	for range 2 {
		s, err := http.Get(inst.URL + "/emulator/v1/projects/demo-loupe/messaging/stream?token=" + token)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Body.Close()
		lines := bufio.NewScanner(s.Body)
		lines.Scan() // ": connected"
		streams = append(streams, lines)
	}
	if _, err := client.Send(ctx, &messaging.Message{Token: token, Notification: &messaging.Notification{Title: "Payment received", Body: "Sam paid $45"}}); err != nil {
		t.Fatal(err)
	}
	for i, lines := range streams {
		var got string
		for lines.Scan() {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				got = data
				break
			}
		}
		if !strings.Contains(got, `"title":"Payment received"`) {
			t.Errorf("stream %d got %q", i, got)
		}
	}

	req, _ := http.NewRequest("DELETE", inst.URL+"/emulator/v1/projects/demo-loupe/messaging/tokens/"+token, nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("unregister: %v %v", resp, err)
	}
	for i, lines := range streams {
		for lines.Scan() {
			if lines.Text() != "" {
				t.Errorf("stream %d after unregister: %q", i, lines.Text())
			}
		}
	}
	if resp, err := http.Get(inst.URL + "/emulator/v1/projects/demo-loupe/messaging/stream?token=" + token); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("a stream for an unregistered token: %v %v", resp, err)
	}
}

// TestSend_UnknownFieldsAreErrors: a send request with a misspelt field is
// refused as FCM's front end refuses it, and nothing is delivered.
func TestSend_UnknownFieldsAreErrors(t *testing.T) {
	inst, _, token := setup(t)
	for body, want := range map[string]string{
		`{"message":{"token":"` + token + `","notificaton":{"title":"x"}}}`:         `Invalid JSON payload received. Unknown name "notificaton" at 'message': Cannot find field.`,
		`{"mesage":{"token":"` + token + `"}, "message":{"token":"` + token + `"}}`: `Invalid JSON payload received. Unknown name "mesage": Cannot find field.`,
	} {
		code, out := loupetest.Call(t, "POST", inst.URL+"/v1/projects/demo-loupe/messages:send", body)
		if msg, _ := out["error"].(map[string]any)["message"].(string); code != 400 || msg != want {
			t.Errorf("send %s: HTTP %d %v, want 400 %s", body, code, out, want)
		}
	}
	code, out := loupetest.Call(t, "GET", inst.URL+"/emulator/v1/projects/demo-loupe/messaging/messages", "")
	if msgs, _ := out["messages"].([]any); code != 200 || len(msgs) != 0 {
		t.Errorf("refused sends were delivered: %d %v", code, out)
	}
}

// TestTokens_StrictTokensBelongToTheirUser: with --strict-credentials a push
// token is issued only to a user (or the admin), only its user or the admin
// unregisters it, and a user holds at most 20: the 21st unregisters the
// first, which FCM's send then calls UNREGISTERED. In local mode anyone
// issues and unregisters, as before.
func TestTokens_StrictTokensBelongToTheirUser(t *testing.T) {
	const tokens = "/emulator/v1/projects/demo-loupe/messaging/tokens"
	issue := func(h *inproc.Harness, bearer string) string {
		t.Helper()
		code, body := h.Do("POST", tokens, "", bearer, "")
		var out struct{ Token string }
		if err := json.Unmarshal([]byte(body), &out); code != 200 || err != nil || out.Token == "" {
			t.Fatalf("issue a token as %q: HTTP %d %s", bearer, code, body)
		}
		return out.Token
	}
	strict := inproc.Start(t, inproc.Options{StrictCredentials: true})
	alice, bob, admin := strict.UserToken("alice"), strict.UserToken("bob"), strict.AdminToken()
	if code, body := strict.Do("POST", tokens, "", "", ""); code != 401 || !strings.Contains(body, "UNAUTHENTICATED") {
		t.Errorf("issue without a credential: HTTP %d %s, want 401 UNAUTHENTICATED", code, body)
	}
	if code, _ := strict.Do("POST", tokens, "", "owner", ""); code != 401 {
		t.Errorf("issue with the local owner credential: HTTP %d, want 401", code)
	}
	first := issue(strict, alice)
	for who, want := range map[string]int{"": 401, bob: 403} {
		if code, body := strict.Do("DELETE", tokens+"/"+first, "", who, ""); code != want {
			t.Errorf("unregister alice's token as %q: HTTP %d %s, want %d", who, code, body, want)
		}
	}
	for range 20 {
		issue(strict, alice)
	}
	send := func(token string) int {
		code, _ := strict.Do("POST", "/v1/projects/demo-loupe/messages:send", "application/json", admin,
			`{"message":{"token":"`+token+`","notification":{"title":"hi"}}}`)
		return code
	}
	if code := send(first); code != 404 {
		t.Errorf("send to alice's 1st token after her 21st: HTTP %d, want 404 UNREGISTERED", code)
	}
	last := issue(strict, alice)
	if code := send(last); code != 200 {
		t.Errorf("send to alice's newest token: HTTP %d, want 200", code)
	}
	if code, _ := strict.Do("DELETE", tokens+"/"+last, "", alice, ""); code != 204 {
		t.Errorf("alice unregisters her token: HTTP %d, want 204", code)
	}
	if code := send(last); code != 404 {
		t.Errorf("send to an unregistered token: HTTP %d, want 404", code)
	}
	byAdmin := issue(strict, admin)
	if code, _ := strict.Do("DELETE", tokens+"/"+issue(strict, bob), "", admin, ""); code != 204 {
		t.Errorf("the admin unregisters bob's token: HTTP %d, want 204", code)
	}
	if code := send(byAdmin); code != 200 {
		t.Errorf("send to the admin's token: HTTP %d, want 200", code)
	}

	local := inproc.Start(t, inproc.Options{})
	token := issue(local, "")
	if code, _ := local.Do("DELETE", tokens+"/"+token, "", "", ""); code != 204 {
		t.Errorf("local: unregister without a credential: HTTP %d, want 204", code)
	}
}
