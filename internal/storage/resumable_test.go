package storage_test

import (
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// upload sends one command of a Firebase resumable upload as the official
// emulator's conformance tests do: headers as given (no offset unless
// given), body as given. It returns the status, X-Goog-Upload-Status and body.
func upload(t *testing.T, uploadURL string, header map[string]string, body string) (int, string, string) {
	t.Helper()
	resp, data := call(t, "PUT", uploadURL, strings.NewReader(body), header)
	return resp.StatusCode, resp.Header.Get("X-Goog-Upload-Status"), string(data)
}

// TestService_ResumableCommands follows a Firebase resumable upload through
// each command as the official emulator answers them: chunks without an
// offset land at the current one, the rules judge the finalize (as the
// start's caller when the finalize carries no credential), and cancelled
// and finished sessions refuse what they no longer allow.
func TestService_ResumableCommands(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: loupetest.Rules(t, "", loupetest.RepoFile("storage.rules"))})
	sam := "Bearer " + loupetest.MockToken("sam")
	start := func(t *testing.T, name, auth string) string {
		t.Helper()
		h := map[string]string{"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
			"X-Goog-Upload-Header-Content-Type": "image/png", "Content-Type": "application/json"}
		if auth != "" {
			h["Authorization"] = auth
		}
		resp, body := firebase(t, inst, "POST", "?name="+name, strings.NewReader(`{"contentType":"image/png"}`), h)
		if resp.StatusCode != 200 || resp.Header.Get("X-Goog-Upload-URL") == "" {
			t.Fatalf("start %s: %d %s", name, resp.StatusCode, body)
		}
		return resp.Header.Get("X-Goog-Upload-URL")
	}
	cmd := func(c string) map[string]string { return map[string]string{"X-Goog-Upload-Command": c} }

	t.Run("chunks without an offset, finalize without credentials", func(t *testing.T) {
		u := start(t, "avatars%2Fsam%2Fa.png", sam)
		if code, st, body := upload(t, u, cmd("upload"), "PNG"); code != 200 || st != "active" {
			t.Fatalf("upload without an offset: %d %s %s", code, st, body)
		}
		code, st, body := upload(t, u, cmd("upload, finalize"), "DATA")
		if code != 200 || st != "final" || !strings.Contains(body, `"size":"7"`) {
			t.Fatalf("upload, finalize without an offset or credentials (judged as sam, who started it): %d %s %s", code, st, body)
		}
		resp, data := firebase(t, inst, "GET", "/avatars%2Fsam%2Fa.png?alt=media", nil, map[string]string{"Authorization": sam})
		if resp.StatusCode != 200 || string(data) != "PNGDATA" {
			t.Errorf("content: %d %q", resp.StatusCode, data)
		}
		if code, _, _ := upload(t, u, cmd("finalize"), ""); code != 200 {
			t.Errorf("finalize again: %d, want 200", code)
		}
		if code, st, _ := upload(t, u, cmd("cancel"), ""); code != 400 || st != "final" {
			t.Errorf("cancel a finished upload: %d %s, want 400 final", code, st)
		}
	})

	t.Run("rules judge the finalize, not the start", func(t *testing.T) {
		u := start(t, "avatars%2Fsam%2Fb.png", "") // nobody may write there: the start still succeeds
		for range 2 {
			if code, st, body := upload(t, u, cmd("upload, finalize"), "PNG"); code != 403 || st != "final" || !strings.Contains(body, "No WRITE permission") {
				t.Errorf("finalize by nobody: %d %s %s, want 403 final", code, st, body)
			}
		}
		if code, st, _ := upload(t, u, cmd("query"), ""); code != 200 || st != "final" {
			t.Errorf("query a refused upload: %d %s", code, st)
		}
		// A finalize carrying its own credential is judged as that caller.
		u = start(t, "avatars%2Fsam%2Fc.png", "")
		if code, st, body := upload(t, u, map[string]string{"X-Goog-Upload-Command": "upload, finalize", "Authorization": sam}, "PNG"); code != 200 || st != "final" {
			t.Errorf("finalize as sam of a session started by nobody: %d %s %s", code, st, body)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		u := start(t, "avatars%2Fsam%2Fd.png", sam)
		if code, _, _ := upload(t, u, map[string]string{"X-Goog-Upload-Command": "upload", "X-Goog-Upload-Offset": "0"}, "PN"); code != 200 {
			t.Fatalf("chunk: %d", code)
		}
		if code, st, _ := upload(t, u, cmd("cancel"), ""); code != 200 || st != "cancelled" {
			t.Fatalf("cancel: %d %s", code, st)
		}
		for range 2 {
			if code, _, _ := upload(t, u, cmd("finalize"), ""); code != 400 {
				t.Errorf("finalize a cancelled upload: %d, want 400", code)
			}
		}
		if code, _, _ := upload(t, u, cmd("upload"), "G"); code != 400 {
			t.Errorf("upload to a cancelled upload: %d, want 400", code)
		}
		if code, _, _ := upload(t, u, cmd("cancel"), ""); code != 200 {
			t.Errorf("cancel again: %d, want 200", code)
		}
		if code, st, _ := upload(t, u, cmd("query"), ""); code != 200 || st != "cancelled" {
			t.Errorf("query a cancelled upload: %d %q, want 200 cancelled", code, st)
		}
		if resp, _ := firebase(t, inst, "GET", "/avatars%2Fsam%2Fd.png", nil, map[string]string{"Authorization": sam}); resp.StatusCode != 404 {
			t.Errorf("the cancelled object: %d, want 404", resp.StatusCode)
		}
	})
}
