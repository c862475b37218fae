package database

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/identity"
)

// gateAuthorizer holds a listen at a path whose first key is gated until
// the test releases it: a rules check that takes its time.
type gateAuthorizer struct {
	gated   string
	entered chan struct{}
	release chan struct{}
}

func (g *gateAuthorizer) Read(_ context.Context, a ReadAccess) error {
	if a.Method == "listen" && len(a.Path) > 0 && a.Path[0] == g.gated {
		g.entered <- struct{}{}
		<-g.release
	}
	return nil
}

func (g *gateAuthorizer) Write(context.Context, WriteAccess) error { return nil }

// await waits for one value of ch; the timeout only keeps a broken engine
// from hanging the test.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never happened", what)
		panic("unreachable")
	}
}

// TestEngine_ASlowListenHoldsUpNoOtherListener opens a listen whose rules
// check and then whose first data are slow (held by the test), and expects
// writes meanwhile to reach the other listeners at once, as another
// connection's listen would see them. The slow listen still gets its first
// data and then exactly the changes made after it, in order: none lost,
// none twice.
func TestEngine_ASlowListenHoldsUpNoOtherListener(t *testing.T) {
	e := open(t, "")
	gate := &gateAuthorizer{gated: "big", entered: make(chan struct{}), release: make(chan struct{})}
	e.SetAuthorizer(gate)
	set(t, e, "/big", `{"a":1,"b":2}`)
	set(t, e, "/small", `0`)
	ctx := context.Background()
	user := identity.Principal{UID: "u"}

	small := make(chan string, 16)
	cancelSmall, err := e.Listen(ctx, "ns", Path{"small"}, Query{}, user, func(u Update) { small <- string(u.Value.JSON()) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cancelSmall)
	if got := await(t, small, "the small listen's first data"); got != "0" {
		t.Fatalf("small first data %s", got)
	}

	sendFirst := make(chan struct{})
	var releaseGate, releaseFirst sync.Once
	t.Cleanup(func() { // first, even when a check failed
		releaseGate.Do(func() { close(gate.release) })
		releaseFirst.Do(func() { close(sendFirst) })
	})
	var big []string
	firstData := make(chan struct{})
	listened := make(chan error, 1)
	sendFirstDone := make(chan struct{}) // the big listen stays until the test ends
	t.Cleanup(func() { close(sendFirstDone) })
	go func() {
		cancel, err := e.Listen(ctx, "ns", Path{"big"}, Query{}, user, func(u Update) {
			if big == nil {
				close(firstData)
				<-sendFirst // building and sending the first data takes long
			}
			big = append(big, u.Path.String()+" "+string(u.Value.JSON()))
		})
		if err == nil {
			defer cancel()
		}
		listened <- err
		<-sendFirstDone
	}()
	written := func(path, data string) {
		t.Helper()
		done := make(chan struct{})
		go func() { set(t, e, path, data); close(done) }()
		await(t, done, "the write of "+path)
	}

	await(t, gate.entered, "the big listen's rules check")
	written("/small", "1")
	if got := await(t, small, "the small listen's update while the big listen's rules are checked"); got != "1" {
		t.Fatalf("small got %s, want 1", got)
	}
	written("/big/c", "3")
	releaseGate.Do(func() { close(gate.release) })

	await(t, firstData, "the big listen's first data")
	written("/small", "2")
	if got := await(t, small, "the small listen's update while the big listen's first data is sent"); got != "2" {
		t.Fatalf("small got %s, want 2", got)
	}
	written("/big/a", "10")
	releaseFirst.Do(func() { close(sendFirst) })
	if err := await(t, listened, "the big listen"); err != nil {
		t.Fatal(err)
	}
	set(t, e, "/big/b", "20")

	want := []string{`/big {"a":1,"b":2}`, `/big/c 3`, `/big/a 10`, `/big/b 20`}
	if !slices.Equal(big, want) {
		t.Errorf("the big listen got\n%s\nwant\n%s", strings.Join(big, "\n"), strings.Join(want, "\n"))
	}
}

// TestEngine_WatchPathsNamesWhatEachCommitChanged watches a namespace's
// changed paths, as the console's change feed does: each commit's set path,
// or the children of an update that changed, in commit order; nothing for
// another namespace, for an update that changes nothing, or once cancelled.
func TestEngine_WatchPathsNamesWhatEachCommitChanged(t *testing.T) {
	e := open(t, "")
	set(t, e, "/users", `{"a":{"n":1},"b":{"n":2}}`)
	var got []string
	cancel, err := e.WatchPaths("ns", func(paths []Path) {
		var s []string
		for _, p := range paths {
			s = append(s, p.String())
		}
		got = append(got, strings.Join(s, " "))
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	update := func(ns, path, data string) {
		t.Helper()
		if _, err := e.Write(ctx, Write{NS: ns, Path: mustPath(t, path), Op: OpUpdate, Value: value(t, data), Caller: identity.Owner}); err != nil {
			t.Fatal(err)
		}
	}
	update("ns", "/users", `{"a/n":5,"b":null,"c":null}`)
	set(t, e, "/users/a/n", `6`)
	update("other", "/x", `{"y":1}`)
	update("ns", "/users", `{"zz":null}`)
	set(t, e, "/", `{"top":true}`)
	cancel()
	set(t, e, "/top", `false`)
	want := []string{"/users/a/n /users/b", "/users/a/n", "/"}
	if !slices.Equal(got, want) {
		t.Errorf("watched paths\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := e.WatchPaths("bad/ns", func([]Path) {}); err == nil {
		t.Error("a bad namespace was watched")
	}
}

// TestEngine_ListenersSentTheSameUpdateShareItsEncoding: the listeners a
// commit sends the same update (above or at the location written) get one
// encoding per key, made once; another key is encoded apart.
func TestEngine_ListenersSentTheSameUpdateShareItsEncoding(t *testing.T) {
	e := open(t, "")
	ctx := context.Background()
	var mu sync.Mutex
	encodes := map[string]int{}
	got := make(chan string, 16)
	listen := func(p Path, key string) {
		cancel, err := e.Listen(ctx, "ns", p, Query{}, identity.Owner, func(u Update) {
			b := u.Encoded(key, func() []byte {
				mu.Lock()
				encodes[key]++
				mu.Unlock()
				return u.Value.JSON()
			})
			got <- key + " " + string(b)
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cancel)
		await(t, got, "the first data of "+p.String())
	}
	listen(Path{"room"}, "k")
	listen(Path{"room"}, "k")
	listen(Path{"room", "a"}, "k")
	listen(Path{"room"}, "other")
	mu.Lock()
	clear(encodes) // each first data is its own
	mu.Unlock()
	set(t, e, "/room/a", `2`)
	var sent []string
	for range 4 {
		sent = append(sent, await(t, got, "an update"))
	}
	slices.Sort(sent)
	if want := []string{"k 2", "k 2", "k 2", "other 2"}; !slices.Equal(sent, want) {
		t.Errorf("sent %q, want %q", sent, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if encodes["k"] != 1 || encodes["other"] != 1 {
		t.Errorf("encoded %v, want once per key", encodes)
	}
}

// gateWrites holds each write to the namespace slow in its rules check
// until the test releases it.
type gateWrites struct{ entered, release chan struct{} }

func (g gateWrites) Read(context.Context, ReadAccess) error { return nil }

func (g gateWrites) Write(_ context.Context, a WriteAccess) error {
	if a.NS == "slow" {
		g.entered <- struct{}{}
		<-g.release
	}
	return nil
}

// TestEngine_ASlowRulesCheckHoldsUpOnlyItsNamespace: while a write's rules
// check in one namespace takes its time, a write to another namespace is
// made and answered.
func TestEngine_ASlowRulesCheckHoldsUpOnlyItsNamespace(t *testing.T) {
	e := open(t, "")
	gate := gateWrites{entered: make(chan struct{}), release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(gate.release) }) }
	t.Cleanup(release) // before the engine closes, even when a check failed
	e.SetAuthorizer(gate)
	user := identity.Principal{UID: "u"}
	write := func(ns string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := e.Write(context.Background(), Write{NS: ns, Path: Path{"x"}, Op: OpSet, Value: 1.0, Caller: user})
			done <- err
		}()
		return done
	}
	slow := write("slow")
	await(t, gate.entered, "the slow namespace's rules check")
	if err := await(t, write("fast"), "the write to another namespace"); err != nil {
		t.Fatal(err)
	}
	release()
	if err := await(t, slow, "the slow write"); err != nil {
		t.Fatal(err)
	}
}
