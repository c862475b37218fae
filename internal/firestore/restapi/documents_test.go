package restapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/identity"
)

// serveREST serves the REST mapping over an in-memory engine for the
// test, and returns a function that sends one request (bearer "" for no
// Authorization) and decodes its JSON answer.
func serveREST(t *testing.T) func(method, target, bearer, body string) (int, map[string]any) {
	engine, err := firestore.Open(firestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	mux := http.NewServeMux()
	Register(mux, engine, identity.Local)
	return func(method, target, bearer, body string) (int, map[string]any) {
		t.Helper()
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: answer %q is not JSON", method, target, rec.Body)
		}
		return rec.Code, out
	}
}

// TestDocumentMethods drives the REST mapping's document methods as the
// REST clients send them (create in a collection, get with a mask, update
// with an update mask and preconditions, list by pages, delete), with
// Firestore's answers to what it refuses.
func TestDocumentMethods(t *testing.T) {
	do := serveREST(t)
	const items = "/v1/projects/p/databases/(default)/documents/items"
	fields := func(out map[string]any) map[string]any {
		f, _ := out["fields"].(map[string]any)
		return f
	}

	code, out := do("POST", items+"?documentId=a", "owner", `{"fields":{"n":{"integerValue":"1"},"m":{"stringValue":"x"}}}`)
	if code != 200 || out["name"] != "projects/p/databases/(default)/documents/items/a" || len(fields(out)) != 2 {
		t.Fatalf("create items/a = %d %v", code, out)
	}
	if code, out := do("POST", items+"?documentId=a", "owner", `{}`); code != http.StatusConflict {
		t.Errorf("create of an existing document = %d %v, want 409", code, out)
	}
	if code, out := do("POST", items+"?documentId=b", "owner", `{}`); code != 200 {
		t.Fatalf("create items/b = %d %v", code, out)
	}
	if code, out := do("POST", items, "owner", `{}`); code != 200 || len(strings.TrimPrefix(out["name"].(string), "projects/p/databases/(default)/documents/items/")) != 20 {
		t.Errorf("create without documentId = %d %v, want a 20-character id", code, out)
	}

	for _, refused := range []struct{ what, method, target, body string }{
		{"create at a document's path", "POST", items + "/a", `{}`},
		{"update of a collection", "PATCH", items, `{}`},
		{"delete of a collection", "DELETE", items, ``},
		{"currentDocument.exists that is not a boolean", "PATCH", items + "/a?currentDocument.exists=maybe", `{}`},
		{"currentDocument.updateTime that is not a time", "PATCH", items + "/a?currentDocument.updateTime=yesterday", `{}`},
		{"a parameter the method does not take", "PATCH", items + "/a?colour=red", `{}`},
		{"a body that is not a document", "PATCH", items + "/a", `{"fields":1}`},
		{"a negative pageSize", "GET", items + "?pageSize=-1", ``},
		{"a readTime that is not a time", "GET", items + "?readTime=later", ``},
	} {
		code, out := do(refused.method, refused.target, "owner", refused.body)
		e, _ := out["error"].(map[string]any)
		if code != http.StatusBadRequest || e["status"] != "INVALID_ARGUMENT" {
			t.Errorf("%s: %d %v, want 400 INVALID_ARGUMENT", refused.what, code, out)
		}
	}

	// Production refuses an array directly inside an array, in its own words.
	code, out = do("PATCH", "/v1/projects/p/databases/(default)/documents/nested/doc", "owner", `{"fields":{"path":{"arrayValue":{"values":[{"arrayValue":{"values":[{"doubleValue":1}]}}]}}}}`)
	if e, _ := out["error"].(map[string]any); code != http.StatusBadRequest || e["status"] != "INVALID_ARGUMENT" || e["message"] != "Property path contains an invalid nested entity." {
		t.Errorf("an array inside an array over REST: %d %v, want 400 INVALID_ARGUMENT, production's message", code, out)
	}

	if code, out := do("GET", items+"/a?mask.fieldPaths=m", "owner", ""); code != 200 || len(fields(out)) != 1 || fields(out)["m"] == nil {
		t.Errorf("get with mask m = %d %v, want only m", code, out)
	}
	if code, out := do("GET", items+"/nope", "owner", ""); code != http.StatusNotFound || !strings.Contains(out["error"].(map[string]any)["message"].(string), "items/nope") {
		t.Errorf("get of a missing document = %d %v, want 404 naming it", code, out)
	}

	code, out = do("PATCH", items+"/a?updateMask.fieldPaths=n", "owner", `{"fields":{"n":{"integerValue":"2"},"m":{"stringValue":"y"}}}`)
	if f := fields(out); code != 200 || f["n"].(map[string]any)["integerValue"] != "2" || f["m"].(map[string]any)["stringValue"] != "x" {
		t.Errorf("update with updateMask n = %d %v, want n = 2 and m untouched", code, out)
	}
	if code, out := do("PATCH", items+"/missing?currentDocument.exists=true", "owner", `{}`); code != http.StatusNotFound {
		t.Errorf("update of a missing document that must exist = %d %v, want 404", code, out)
	}

	code, out = do("GET", items+"?pageSize=2&mask.fieldPaths=m", "owner", "")
	token, _ := out["nextPageToken"].(string)
	docs, _ := out["documents"].([]any)
	if code != 200 || len(docs) != 2 || token == "" {
		t.Fatalf("first page of 2 of 3 = %d %v", code, out)
	}
	for _, d := range docs {
		if f := fields(d.(map[string]any)); f["n"] != nil || (strings.HasSuffix(d.(map[string]any)["name"].(string), "/a") && f["m"] == nil) {
			t.Errorf("listed with mask m: %v, want only m", d)
		}
	}
	if code, out := do("GET", items+"?pageSize=2&pageToken="+token, "owner", ""); code != 200 || len(out["documents"].([]any)) != 1 || out["nextPageToken"] != nil {
		t.Errorf("last page = %d %v, want 1 document and no token", code, out)
	}

	if code, out := do("DELETE", items+"/a", "owner", ""); code != 200 || len(out) != 0 {
		t.Errorf("delete = %d %v, want 200 {}", code, out)
	}
	if code, _ := do("GET", items+"/a", "owner", ""); code != http.StatusNotFound {
		t.Errorf("get after delete = %d, want 404", code)
	}
	for _, method := range []string{"GET", "PATCH", "DELETE"} {
		if code, out := do(method, items+"/a", "not-a-token", "{}"); code != http.StatusUnauthorized {
			t.Errorf("%s with a bad token = %d %v, want 401", method, code, out)
		}
	}
}

// TestGetDocument_ReadTimeAndTransaction reads a document as GetDocument's
// consistency parameters select: readTime gives the version then current,
// transaction reads in a transaction begun over REST; both at once, or
// bytes that are not base64, are refused.
func TestGetDocument_ReadTimeAndTransaction(t *testing.T) {
	serve := serveREST(t)
	do := func(method, target, body string) (int, map[string]any) {
		t.Helper()
		return serve(method, target, "owner", body)
	}
	const db = "/v1/projects/p/databases/(default)"
	n := func(out map[string]any) any {
		f, _ := out["fields"].(map[string]any)
		v, _ := f["n"].(map[string]any)
		return v["integerValue"]
	}
	_, first := do("PATCH", db+"/documents/items/a", `{"fields":{"n":{"integerValue":"1"}}}`)
	if code, out := do("PATCH", db+"/documents/items/a", `{"fields":{"n":{"integerValue":"2"}}}`); code != 200 {
		t.Fatalf("update = %d %v", code, out)
	}
	if code, out := do("GET", db+"/documents/items/a?readTime="+first["updateTime"].(string), ""); code != 200 || n(out) != "1" {
		t.Errorf("get at the first write's time = %d %v, want n = 1", code, out)
	}
	code, begun := do("POST", db+"/documents:beginTransaction", `{}`)
	txn, _ := begun["transaction"].(string)
	if code != 200 || txn == "" {
		t.Fatalf("beginTransaction = %d %v", code, begun)
	}
	if code, out := do("GET", db+"/documents/items/a?transaction="+url.QueryEscape(txn), ""); code != 200 || n(out) != "2" {
		t.Errorf("get in a transaction = %d %v, want n = 2", code, out)
	}
	for _, refused := range []struct{ what, target string }{
		{"readTime and transaction", db + "/documents/items/a?transaction=" + url.QueryEscape(txn) + "&readTime=" + first["updateTime"].(string)},
		{"a transaction that is not base64", db + "/documents/items/a?transaction=%25%25"},
		{"a list in a transaction", db + "/documents/items?transaction=" + url.QueryEscape(txn)},
	} {
		code, out := do("GET", refused.target, "")
		if e, _ := out["error"].(map[string]any); code != http.StatusBadRequest || e["status"] != "INVALID_ARGUMENT" {
			t.Errorf("%s: %d %v, want 400 INVALID_ARGUMENT", refused.what, code, out)
		}
	}
}
