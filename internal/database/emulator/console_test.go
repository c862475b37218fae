package emulator_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/loupe-dev/loupe/internal/loupetest/inproc"
)

// TestConsole_ChildrenPagedAndChangesNamePaths checks what the console's
// Realtime Database tab reads: a location's children a page at a time
// (leaves with their values, objects with their counts, which shallow=true
// cannot tell from a true leaf), the namespaces, and a stream of the paths
// each write changes.
func TestConsole_ChildrenPagedAndChangesNamePaths(t *testing.T) {
	inst := serve(t)
	base := inst.URL
	if code, _ := loupetest.Call(t, "PUT", base+"/.json?ns=tab", `{"flag":true,"users":{"a":{"n":1},"b":{"n":2},"c":3}}`); code != 200 {
		t.Fatalf("PUT: %d", code)
	}
	list := func(query string) string {
		t.Helper()
		resp, err := http.Get(base + "/emulator/v1/database/children?ns=tab&" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v any
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	for _, tc := range []struct{ query, want string }{
		{"path=/", `{"children":[{"key":"flag","value":true},{"children":3,"key":"users"}],"exists":true,"path":"/","total":2}`},
		{"path=/users&limit=2", `{"children":[{"children":1,"key":"a"},{"children":1,"key":"b"}],"exists":true,"next":"b","path":"/users","total":3}`},
		{"path=/users&limit=2&startAfter=b", `{"children":[{"key":"c","value":3}],"exists":true,"path":"/users","total":3}`},
		{"path=/users/c", `{"children":[],"exists":true,"path":"/users/c","total":0,"value":3}`},
		{"path=/none", `{"children":[],"exists":false,"path":"/none","total":0}`},
	} {
		if got := list(tc.query); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.query, got, tc.want)
		}
	}
	_, names := loupetest.Call(t, "GET", base+"/emulator/v1/database/namespaces", "")
	if ns, _ := json.Marshal(names["namespaces"]); !strings.Contains(string(ns), `"tab"`) {
		t.Errorf("namespaces: %s", ns)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/emulator/v1/database/changes?ns=tab", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	loupetest.Call(t, "PATCH", base+"/users.json?ns=tab", `{"a/n":5,"b":null}`)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if want := `{"paths":["/users/a/n","/users/b"]}`; line != want {
				t.Fatalf("change %s, want %s", line, want)
			}
			return
		}
	}
	t.Fatal("the stream ended without a change")
}

// BenchmarkConsoleFeed_WriteUnderLargeTree writes one small value under a
// tree of 100,000 leaves with the console's change feed open, and waits for
// the feed to name the write's path: what one write costs while the
// Realtime Database tab is open.
func BenchmarkConsoleFeed_WriteUnderLargeTree(b *testing.B) {
	h := inproc.Start(b, inproc.Options{Only: []string{"database"}})
	srv := httptest.NewServer(h.Handler())
	b.Cleanup(srv.Close)
	base := srv.URL
	var tree strings.Builder
	tree.WriteString("{")
	for i := range 200 {
		if i > 0 {
			tree.WriteString(",")
		}
		fmt.Fprintf(&tree, `"g%d":{`, i)
		for j := range 500 {
			if j > 0 {
				tree.WriteString(",")
			}
			fmt.Fprintf(&tree, `"k%d":%d`, j, j)
		}
		tree.WriteString("}")
	}
	tree.WriteString("}")
	if code, _ := loupetest.Call(b, "PUT", base+"/big.json?ns=bench", tree.String()); code != 200 {
		b.Fatalf("PUT the tree: %d", code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/emulator/v1/database/changes?ns=bench", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	client := &http.Client{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		put, _ := http.NewRequest("PUT", base+"/big/g7/k7.json?ns=bench&print=silent", strings.NewReader(strconv.Itoa(i+1000)))
		r, err := client.Do(put)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				break
			}
		}
	}
}
