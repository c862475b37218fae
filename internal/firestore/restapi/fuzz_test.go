package restapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/identity"
)

// FuzzPost sends arbitrary bodies to every REST verb, as the owner, against
// an in-memory engine: no body may panic the handler or earn a 500, and every
// error answer has Firestore's {"error":{"code","message","status"}} shape.
func FuzzPost(f *testing.F) {
	verbs := []string{"commit", "batchGet", "runQuery", "runAggregationQuery", "beginTransaction", "rollback"}
	for _, s := range []string{
		`{"writes":[{"update":{"name":"projects/p/databases/(default)/documents/a/b","fields":{"x":{"integerValue":"1"}}}}]}`,
		`{"writes":[{"delete":"projects/p/databases/(default)/documents/a/b","currentDocument":{"exists":true}}]}`,
		`{"documents":["projects/p/databases/(default)/documents/a/b"]}`,
		`{"structuredQuery":{"from":[{"collectionId":"a"}],"where":{"fieldFilter":{"field":{"fieldPath":"x"},"op":"EQUAL","value":{"integerValue":"1"}}},"limit":3}}`,
		`{"structuredAggregationQuery":{"structuredQuery":{"from":[{"collectionId":"a"}]},"aggregations":[{"alias":"n","count":{}}]}}`,
		`{"options":{"readOnly":{}}}`,
		`{"transaction":"AAAA"}`,
		`{`, `[]`, `null`, `{"writes":[{}]}`,
	} {
		for i := range verbs {
			f.Add(uint8(i), s)
		}
	}
	engine, err := firestore.Open(firestore.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { engine.Close() })
	mux := http.NewServeMux()
	Register(mux, engine, identity.Local)
	f.Fuzz(func(t *testing.T, v uint8, body string) {
		verb := verbs[int(v)%len(verbs)]
		req := httptest.NewRequest(http.MethodPost, "/v1/projects/p/databases/(default)/documents:"+verb, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer owner")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: HTTP %d %s", verb, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var e struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
					Status  string `json:"status"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code != rec.Code || e.Error.Status == "" {
				t.Fatalf("%s %q: HTTP %d answer %q is not a Firestore error", verb, body, rec.Code, rec.Body)
			}
		}
	})
}
