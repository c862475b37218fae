package auth

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/identity"
)

// addUsers batch-creates n accounts u00000…: e-mail user<i>@example.com,
// display name "Person <i>", every third with a phone number.
func addUsers(tb testing.TB, e *Engine, n int) {
	tb.Helper()
	for from := 0; from < n; from += 1000 {
		var list []any
		for i := from; i < min(from+1000, n); i++ {
			u := map[string]any{"localId": fmt.Sprintf("u%06d", i), "email": fmt.Sprintf("user%d@example.com", i),
				"displayName":      fmt.Sprintf("Person %d", i),
				"providerUserInfo": []any{map[string]any{"providerId": "password", "rawId": fmt.Sprintf("user%d@example.com", i)}}}
			if i%3 == 0 {
				u["phoneNumber"] = fmt.Sprintf("+1555%07d", i)
			}
			list = append(list, u)
		}
		if _, err := e.Do("batchCreate", &Call{Project: "demo-loupe", Admin: true, Params: map[string]any{"users": list}}); err != nil {
			tb.Fatal(err)
		}
	}
}

func ids(p UserPage) []string {
	var out []string
	for _, u := range p.Users {
		out = append(out, u["localId"].(string))
	}
	return out
}

// TestUsers_PagesByCursorAndSearches reads the console's list: pages in
// localId order continue after their token, a search matches uid, e-mail,
// name and phone case-insensitively and pages too, and the counts and
// providers are those of the whole project.
func TestUsers_PagesByCursorAndSearches(t *testing.T) {
	e, err := NewEngine("", "demo-loupe", identity.Local)
	if err != nil {
		t.Fatal(err)
	}
	addUsers(t, e, 250)
	first := e.Users("demo-loupe", "", "", 100)
	if got := ids(first); len(got) != 100 || got[0] != "u000000" || got[99] != "u000099" || first.NextPageToken != "u000099" {
		t.Fatalf("first page: %d users %v… next %q", len(got), got[:1], first.NextPageToken)
	}
	if first.Total != 250 || first.Matched != 250 || first.Providers["password"] != 250 {
		t.Fatalf("counts: total %d matched %d providers %v", first.Total, first.Matched, first.Providers)
	}
	last := e.Users("demo-loupe", "", "u000199", 100)
	if got := ids(last); len(got) != 50 || got[0] != "u000200" || last.NextPageToken != "" {
		t.Fatalf("last page: %d users from %v, next %q", len(got), got[:1], last.NextPageToken)
	}
	for q, want := range map[string][]string{
		"USER17@EXAMPLE.com": {"u000017"},
		"person 24":          {"u000024", "u000240", "u000241", "u000242", "u000243", "u000244", "u000245", "u000246", "u000247", "u000248", "u000249"},
		"u000123":            {"u000123"},
		"+15550000009":       {"u000009"},
		"nobody":             nil,
	} {
		p := e.Users("demo-loupe", q, "", 100)
		if fmt.Sprint(ids(p)) != fmt.Sprint(want) || p.Matched != len(want) || p.Total != 250 {
			t.Errorf("search %q: %v (matched %d of %d), want %v", q, ids(p), p.Matched, p.Total, want)
		}
	}
	p := e.Users("demo-loupe", "person 24", "", 4)
	if fmt.Sprint(ids(p)) != "[u000024 u000240 u000241 u000242]" || p.NextPageToken != "u000242" || p.Matched != 11 {
		t.Fatalf("searched page: %v next %q matched %d", ids(p), p.NextPageToken, p.Matched)
	}
	p = e.Users("demo-loupe", "person 24", p.NextPageToken, 4)
	if fmt.Sprint(ids(p)) != "[u000243 u000244 u000245 u000246]" {
		t.Fatalf("searched next page: %v", ids(p))
	}
	// Accounts added and deleted since the list was read take their places.
	if _, err := e.Do("batchCreate", &Call{Project: "demo-loupe", Admin: true, Params: map[string]any{"users": []any{
		map[string]any{"localId": "u000002a"}, map[string]any{"localId": "a"}, map[string]any{"localId": "zz"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Do("delete", &Call{Project: "demo-loupe", Admin: true, Params: map[string]any{"localId": "u000001"}}); err != nil {
		t.Fatal(err)
	}
	if p := e.Users("demo-loupe", "", "", 4); fmt.Sprint(ids(p)) != "[a u000000 u000002 u000002a]" || p.Total != 252 {
		t.Fatalf("after changes: %v of %d", ids(p), p.Total)
	}
	if p := e.Users("demo-loupe", "", "u000249", 4); fmt.Sprint(ids(p)) != "[zz]" {
		t.Fatalf("after changes, the end: %v", ids(p))
	}
}

// TestWaitChange_WakesOnAChangeOnly: the change counter moves with a
// change (here a deletion), wakes a waiter, and a waiter with nothing
// changing returns when its context ends.
func TestWaitChange_WakesOnAChangeOnly(t *testing.T) {
	e, err := NewEngine("", "demo-loupe", identity.Local)
	if err != nil {
		t.Fatal(err)
	}
	addUsers(t, e, 3)
	v := e.Changes().Version()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if got := e.Changes().Wait(ctx, v); got != v {
		t.Fatalf("nothing changed, yet the version moved from %d to %d", v, got)
	}
	woke := make(chan uint64)
	go func() { woke <- e.Changes().Wait(context.Background(), v) }()
	if _, err := e.Do("delete", &Call{Project: "demo-loupe", Admin: true, Params: map[string]any{"localId": "u000001"}}); err != nil {
		t.Fatal(err)
	}
	if got := <-woke; got == v {
		t.Fatalf("the waiter woke at the same version %d", got)
	}
	if p := e.Users("demo-loupe", "", "", 10); fmt.Sprint(ids(p)) != "[u000000 u000002]" || p.Version == v {
		t.Fatalf("after the deletion: %v at version %d", ids(p), p.Version)
	}
}

// BenchmarkConsoleUsers reads the console's Auth list at 100,000 accounts:
// the first page, a page deep in the list, a search over e-mail, name,
// uid and phone, and the first page and a search again after a change to
// an account (counts and search text are rebuilt) and after a sign-up (the
// listing is sorted again). Target: each under 300 ms.
func BenchmarkConsoleUsers(b *testing.B) {
	e, err := NewEngine("", "demo-loupe", identity.Local)
	if err != nil {
		b.Fatal(err)
	}
	addUsers(b, e, 100_000)
	e.Users("demo-loupe", "", "", 100)
	b.Run("first-page", func(b *testing.B) {
		for range b.N {
			e.Users("demo-loupe", "", "", 100)
		}
	})
	b.Run("page-at-90000", func(b *testing.B) {
		for range b.N {
			e.Users("demo-loupe", "", "u089999", 100)
		}
	})
	b.Run("search", func(b *testing.B) {
		for range b.N {
			if p := e.Users("demo-loupe", "user99999@", "", 100); p.Matched != 1 {
				b.Fatal(p.Matched)
			}
		}
	})
	b.Run("first-page-after-a-change", func(b *testing.B) {
		for i := range b.N {
			b.StopTimer()
			if _, err := e.Do("update", &Call{Project: "demo-loupe", Admin: true, Params: map[string]any{"localId": "u000005", "displayName": fmt.Sprint("Renamed ", i)}}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			e.Users("demo-loupe", "", "", 100)
		}
	})
	b.Run("search-after-a-change", func(b *testing.B) {
		for i := range b.N {
			b.StopTimer()
			if _, err := e.Do("update", &Call{Project: "demo-loupe", Admin: true, Params: map[string]any{"localId": "u000005", "displayName": fmt.Sprint("Again ", i)}}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			e.Users("demo-loupe", "user99999@", "", 100)
		}
	})
	signUps := 0
	b.Run("first-page-after-a-sign-up", func(b *testing.B) {
		for range b.N {
			signUps++
			b.StopTimer()
			if _, err := e.Do("signUp", &Call{Project: "demo-loupe", BaseURL: "http://127.0.0.1:1", Params: map[string]any{"email": fmt.Sprintf("new%d@example.com", signUps), "password": "secret1"}}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			e.Users("demo-loupe", "", "", 100)
		}
	})
}
