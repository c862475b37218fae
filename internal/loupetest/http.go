package loupetest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Call sends method to url with body ("" sends none) and header, given as
// name, value pairs, and returns the status and the answer decoded as a JSON
// object (nil when it is not one). A body is sent as JSON unless header
// names another Content-Type.
func Call(t testing.TB, method, url, body string, header ...string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}
