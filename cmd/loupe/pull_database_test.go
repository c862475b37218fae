package main

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// TestPull_RealtimeDatabase pulls locations of a second loupe's Realtime
// Database (written and read back through the Go Admin SDK): a wide node
// read a range of keys at a time (integer keys ordered before the others,
// as the database orders them), a tree with a child too large for one
// read (copied child by child), a single value; what was not named stays
// behind, and the target's rules are left as they were.
func TestPull_RealtimeDatabase(t *testing.T) {
	prod := loupetest.Start(t, loupetest.Options{InMemory: true})
	local := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject}})
	ctx := context.Background()
	ns := pullProject + "-default-rtdb"
	pdb := loupetest.Database(t, prod, ns)
	presence := map[string]any{}
	for i := range 2500 {
		presence[fmt.Sprintf("u%04d", i)] = map[string]any{"online": i%2 == 0, "last": float64(i)}
	}
	for _, k := range []string{"7", "10", "-3", "007"} {
		presence[k] = "key " + k
	}
	chat := map[string]any{
		"rooms": map[string]any{"r1": map[string]any{"title": "one", "messages": map[string]any{"m1": map[string]any{"text": "hi"}}}},
		// 10 MB under one child: more than one read takes (8 MiB).
		"big": map[string]any{"a": strings.Repeat("a", 5<<20), "b": strings.Repeat("b", 5<<20), "c": 3.0},
	}
	for path, v := range map[string]any{"presence": presence, "chat": chat, "config": map[string]any{"motd": "hello", "flags": map[string]any{"x": true}}, "private": "stays"} {
		if err := pdb.NewRef(path).Set(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	rules := `{"rules": {".read": false, ".write": false}}`
	if code, _ := loupetest.Call(t, http.MethodPut, local.URL+"/.settings/rules.json?ns="+ns, rules, "Authorization", "Bearer owner"); code != http.StatusOK {
		t.Fatalf("set rules: %d", code)
	}

	code, out, errOut := loupe(t, local, "data", "pull", "--from-emulator", prod.Host, "--from-project", pullProject,
		"--database-path", "presence", "--database-path", "/chat", "--database-path", "config/motd")
	if code != 0 || !strings.Contains(errOut, "database: copied /presence") {
		t.Fatalf("pull: %d %q %q", code, out, errOut)
	}
	ldb := loupetest.Database(t, local, ns)
	want := map[string]any{"presence": presence, "chat": chat, "config": map[string]any{"motd": "hello"}, "private": nil}
	for path, w := range want {
		var got any
		if err := ldb.NewRef(path).Get(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("/%s: got %.200v, want %.200v", path, got, w)
		}
	}
	code, body := loupetest.Call(t, http.MethodGet, local.URL+"/.settings/rules.json?ns="+ns, "", "Authorization", "Bearer owner")
	if code != http.StatusOK || fmt.Sprint(body["rules"]) != "map[.read:false .write:false]" {
		t.Errorf("the target's rules after the pull: %d %v", code, body)
	}
}
