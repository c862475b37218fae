package storage_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
)

// bearerClient is the Go SDK pointed at inst's GCS API with token as its
// OAuth token, as an app passes a credential of its own.
func bearerClient(t *testing.T, inst *loupetest.Instance, token string) *storage.Client {
	t.Helper()
	c, err := storage.NewClient(context.Background(), option.WithEndpoint(inst.URL+"/storage/v1/"),
		option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestGCS_StrictCredentials: with --strict-credentials the GCS JSON and XML
// APIs refuse requests without a credential (401, as GCS refuses anonymous
// callers) and judge a user's ID token by the storage rules, as /v0 does.
func TestGCS_StrictCredentials(t *testing.T) {
	ctx := context.Background()
	inst := loupetest.Start(t, loupetest.Options{Config: loupetest.Rules(t, "", loupetest.RepoFile("storage.rules")),
		Args: []string{"--strict-credentials"}})
	uid, token, err := loupetest.SignUp(ctx, inst.URL, "alice@strict.test", "secret-password")
	if err != nil {
		t.Fatal(err)
	}
	alice := bearerClient(t, inst, token)
	own := alice.Bucket(bucket).Object("videos/" + uid + "/clip.mp4")
	w := own.NewWriter(ctx)
	w.ContentType = "video/mp4"
	if _, err := io.WriteString(w, "alice's clip"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("alice uploads into her own folder: %v", err)
	}

	o := "videos%2F" + uid + "%2Fclip.mp4"
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/storage/v1/b/" + bucket + "/o", ""},
		{"GET", "/b/" + bucket + "/o", ""},
		{"GET", "/storage/v1/b/" + bucket + "/o/" + o, ""},
		{"GET", "/storage/v1/b/" + bucket + "/o/" + o + "?alt=media", ""},
		{"GET", "/download/storage/v1/b/" + bucket + "/o/" + o + "?alt=media", ""},
		{"GET", "/" + bucket + "/videos/" + uid + "/clip.mp4", ""},
		{"POST", "/upload/storage/v1/b/" + bucket + "/o?uploadType=media&name=x.txt", "x"},
		{"POST", "/upload/storage/v1/b/" + bucket + "/o?uploadType=resumable&name=x.txt", "{}"},
		{"PATCH", "/storage/v1/b/" + bucket + "/o/" + o, `{"contentType":"text/plain"}`},
		{"POST", "/storage/v1/b/" + bucket + "/o/" + o + "/copyTo/b/" + bucket + "/o/copy.mp4", "{}"},
		{"POST", "/storage/v1/b/" + bucket + "/o/" + o + "/rewriteTo/b/" + bucket + "/o/copy.mp4", "{}"},
		{"DELETE", "/storage/v1/b/" + bucket + "/o/" + o, ""},
		{"GET", "/storage/v1/b", ""},
	} {
		req, _ := http.NewRequest(c.method, inst.URL+c.path, strings.NewReader(c.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.Contains(string(data), "Anonymous caller does not have storage.") {
			t.Errorf("%s %s without credentials: %d %s, want 401", c.method, c.path, resp.StatusCode, data)
		}
	}
	if _, err := bearerClient(t, inst, loupetest.MockToken(uid)).Bucket(bucket).Object("videos/" + uid + "/clip.mp4").Attrs(ctx); httpCode(err) != 401 {
		t.Errorf("an unsigned token: %v, want 401", err)
	}

	// Alice's ID token gets the storage rules: her folder, not Bob's.
	if r, err := own.NewReader(ctx); err != nil {
		t.Errorf("alice reads her clip: %v", err)
	} else {
		data, _ := io.ReadAll(r)
		r.Close()
		if string(data) != "alice's clip" {
			t.Errorf("alice's clip reads %q", data)
		}
	}
	w = alice.Bucket(bucket).Object("videos/bob/clip.mp4").NewWriter(ctx)
	w.ContentType = "video/mp4"
	_, _ = io.WriteString(w, "not alice's")
	if err := w.Close(); httpCode(err) != 403 {
		t.Errorf("alice uploads into bob's folder: %v, want 403", err)
	}
	if a, err := own.Update(ctx, storage.ObjectAttrsToUpdate{ContentType: "video/webm"}); err != nil || a.ContentType != "video/webm" {
		t.Errorf("alice updates her clip: %+v, %v", a, err)
	}
	if _, err := own.Update(ctx, storage.ObjectAttrsToUpdate{ContentType: "text/plain"}); httpCode(err) != 403 {
		t.Errorf("alice updates her clip to a type the rules refuse: %v, want 403", err)
	}
	if _, err := alice.Bucket(bucket).Object("videos/" + uid + "/copy.mp4").CopierFrom(own).Run(ctx); err != nil {
		t.Errorf("alice copies her clip in her folder: %v", err)
	}
	if _, err := alice.Bucket(bucket).Object("videos/bob/copy.mp4").CopierFrom(own).Run(ctx); httpCode(err) != 403 {
		t.Errorf("alice copies her clip into bob's folder: %v, want 403", err)
	}
	var names []string
	it := alice.Bucket(bucket).Objects(ctx, &storage.Query{Prefix: "videos/" + uid + "/"})
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatalf("alice lists her folder: %v", err)
		}
		names = append(names, a.Name)
	}
	if len(names) != 2 {
		t.Errorf("alice's folder lists %v", names)
	}
	if err := alice.Bucket(bucket).Object("videos/" + uid + "/copy.mp4").Delete(ctx); err != nil {
		t.Errorf("alice deletes her copy: %v", err)
	}
	if _, err := alice.Buckets(ctx, "demo-loupe").Next(); httpCode(err) != 403 {
		t.Errorf("alice lists the buckets: %v, want 403", err)
	}

	// The admin credential has full access, rules or not.
	admin := bearerClient(t, inst, inst.AdminToken(t))
	w = admin.Bucket(bucket).Object("videos/bob/clip.mp4").NewWriter(ctx)
	_, _ = io.WriteString(w, "written by the admin")
	if err := w.Close(); err != nil {
		t.Errorf("the admin uploads into bob's folder: %v", err)
	}
	if b, err := admin.Buckets(ctx, "demo-loupe").Next(); err != nil || b.Name != bucket {
		t.Errorf("the admin lists the buckets: %+v, %v", b, err)
	}
	if err := admin.Bucket(bucket).Object("videos/" + uid + "/clip.mp4").Delete(ctx); err != nil {
		t.Errorf("the admin deletes alice's clip: %v", err)
	}
}

// TestGCS_LocalModeIsOwnerLevel: without --strict-credentials the GCS APIs
// are owner-level whatever the credential, as the official emulator's GCS
// endpoints never consult the rules (the SDKs send none to an emulator).
func TestGCS_LocalModeIsOwnerLevel(t *testing.T) {
	ctx := context.Background()
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: loupetest.Rules(t, "", loupetest.RepoFile("storage.rules"))})
	for _, c := range []*storage.Client{client(t, inst), bearerClient(t, inst, loupetest.MockToken("eve"))} {
		w := c.Bucket(bucket).Object("videos/bob/clip.mp4").NewWriter(ctx)
		_, _ = io.WriteString(w, "bob's clip, written by the owner")
		if err := w.Close(); err != nil {
			t.Errorf("a GCS upload the rules would refuse a user: %v", err)
		}
	}
}

// httpCode is the HTTP status of a GCS SDK error, or 0.
func httpCode(err error) int {
	var e *googleapi.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}
