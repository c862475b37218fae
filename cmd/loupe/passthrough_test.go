package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/api/option"
)

// requestsOf is the request log of the loupe at inst.
func requestsOf(t *testing.T, inst *loupetest.Instance) []map[string]any {
	req, _ := http.NewRequest(http.MethodGet, inst.URL+"/emulator/v1/requests", nil)
	req.Header.Set("Authorization", "Bearer owner")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Requests []map[string]any `json:"requests"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Requests
}

// TestPassThrough_StorageReachesTheUpstream: a loupe that passes Storage
// through forwards the SDKs' calls to the upstream loupe, streaming, marks
// them in its request log, and never forwards a locally minted ID token.
func TestPassThrough_StorageReachesTheUpstream(t *testing.T) {
	upstream := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject}})
	local := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject,
		"--only", "firestore,auth", "--pass-through", "storage", "--upstream", upstream.Host}})
	if !strings.Contains(local.Log(), "passing storage through (not emulated)") {
		t.Errorf("the start-up log does not say storage is passed through:\n%s", local.Log())
	}
	ctx := context.Background()
	bucket := pullProject + ".appspot.com"

	// The Go SDK, pointed at the local loupe, writes into the upstream.
	sc, err := storage.NewClient(ctx, option.WithEndpoint("http://"+local.Host+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	w := sc.Bucket(bucket).Object("docs/a.txt").NewWriter(ctx)
	w.Metadata = map[string]string{"firebaseStorageDownloadTokens": "tok-a"}
	if _, err := io.WriteString(w, strings.Repeat("a", 100_000)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("upload through the pass-through: %v", err)
	}
	direct, err := storage.NewClient(ctx, option.WithEndpoint("http://"+upstream.Host+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if attrs, err := direct.Bucket(bucket).Object("docs/a.txt").Attrs(ctx); err != nil || attrs.Size != 100_000 {
		t.Fatalf("the upstream does not hold the object: %v %v", attrs, err)
	}

	// The Firebase API's download URL works through the local loupe.
	resp, err := http.Get(local.URL + "/v0/b/" + bucket + "/o/docs%2Fa.txt?alt=media&token=tok-a")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(body) != 100_000 {
		t.Fatalf("download through the pass-through: %d, %d bytes", resp.StatusCode, len(body))
	}

	// A locally minted ID token is not forwarded: the upstream sees the
	// call without a caller, and the local log says why.
	req, _ := http.NewRequest(http.MethodGet, local.URL+"/v0/b/"+bucket+"/o/docs%2Fa.txt", nil)
	req.Header.Set("Authorization", "Bearer "+loupetest.MockToken("u1"))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var upstreamSaw map[string]any
	for _, e := range requestsOf(t, upstream) {
		if e["service"] == "storage" && e["path"] == "docs/a.txt" && e["method"] == "get" {
			upstreamSaw = e
			break
		}
	}
	if upstreamSaw == nil || upstreamSaw["caller"] != nil {
		t.Errorf("the upstream's record of the metadata read: %v", upstreamSaw)
	}
	if !strings.Contains(local.Log(), "a locally minted ID token, or owner) was not forwarded") {
		t.Errorf("the local log does not say the token was held back:\n%s", local.Log())
	}

	// The local request log marks the forwarded calls. A call is logged
	// once its handler returns, which may be just after the client has the
	// whole answer: read the log until the last call is in it.
	marked := 0
	for deadline := time.Now().Add(5 * time.Second); marked < 3 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		marked = 0
		for _, e := range requestsOf(t, local) {
			if e["passThrough"] == true && e["service"] == "storage" {
				marked++
			}
		}
	}
	if marked < 3 {
		t.Errorf("%d passed-through calls in the local request log, want at least 3", marked)
	}
}
