package emulator

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"sort"
	"sync"
	"testing"

	"github.com/loupe-dev/loupe/internal/database"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/triggers"
)

// recorder is a function behind database triggers: it keeps each event as
// the functions SDKs read it (before, and after = applyChange(before,
// delta)).
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) Deliver(_ context.Context, t triggers.Trigger, e triggers.Event) (int, error) {
	var data struct{ Data, Delta any }
	if err := json.Unmarshal(e.Data, &data); err != nil {
		return 0, err
	}
	auth := "admin"
	if e.Auth != nil {
		auth = e.Auth.Type + ":" + e.Auth.ID
	}
	line, _ := json.Marshal([]any{t.Name, e.Instance, e.Resource, e.Types[0], data.Data, applyChange(data.Data, data.Delta), auth})
	r.mu.Lock()
	r.seen = append(r.seen, string(line))
	r.mu.Unlock()
	return 200, nil
}

// applyChange is how firebase-functions turns an event's data and delta
// into the data after the write.
func applyChange(src, dest any) any {
	s, ok1 := src.(map[string]any)
	d, ok2 := dest.(map[string]any)
	if !ok1 || !ok2 {
		return dest
	}
	out := map[string]any{}
	for k, v := range s {
		if _, changed := d[k]; !changed && v != nil {
			out[k] = v
		}
	}
	for k, v := range d {
		if v != nil {
			out[k] = applyChange(s[k], v)
		}
	}
	return out
}

// tablePublisher publishes straight to a table, as the functions service
// does once its codebases run.
type tablePublisher struct{ *triggers.Table }

func (p tablePublisher) Publish(events ...triggers.Event) { p.Table.Publish(events...) }

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.seen
	r.seen = nil
	sort.Strings(out)
	return out
}

// TestSetPublisher_FiresEachTriggerOncePerChangedLocation writes through
// the engine as clients do (below, at and above a trigger's location, the
// root, a multi-path update, a named instance, an import) and checks what
// the functions would see.
func TestSetPublisher_FiresEachTriggerOncePerChangedLocation(t *testing.T) {
	t.Parallel()
	s, err := New(server.Env{ProjectID: "demo-p", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	table := triggers.New(triggers.Options{Logger: slog.New(slog.DiscardHandler)})
	defer table.Close()
	fn := &recorder{}
	if err := table.SetTriggers("node", []triggers.Trigger{
		{Name: "users", Source: triggers.Database, EventType: triggers.DatabaseWritten, Instance: "demo-p-default-rtdb", Pattern: "users/{uid}", Deliver: fn},
		{Name: "rooms", Source: triggers.Database, EventType: triggers.DatabaseCreated, Instance: "other", Pattern: "rooms/{room}", Deliver: fn},
	}); err != nil {
		t.Fatal(err)
	}
	s.SetPublisher(tablePublisher{table})
	ctx := context.Background()
	write := func(w database.Write) {
		t.Helper()
		if w.NS == "" {
			w.NS = "demo-p-default-rtdb"
		}
		if w.Caller.UID == "" {
			w.Caller = identity.Owner
		}
		if _, err := s.Engine.Write(ctx, w); err != nil {
			t.Fatal(err)
		}
		table.Wait()
	}
	path := func(s string) database.Path {
		p, err := database.ParsePath(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, step := range []struct {
		name string
		w    database.Write
		want []string
	}{
		{"a write below the location", database.Write{Path: path("users/u1/name"), Value: "Ann"},
			[]string{`["users","demo-p-default-rtdb","users/u1","google.firebase.database.ref.v1.created",null,{"name":"Ann"},"admin"]`}},
		{"a signed-in user's write at the location", database.Write{Path: path("users/u1"), Value: map[string]any{"name": "Ann", "age": 3.0},
			Caller: identity.Principal{UID: "u1", Claims: map[string]any{"sub": "u1"}}},
			[]string{`["users","demo-p-default-rtdb","users/u1","google.firebase.database.ref.v1.updated",{"name":"Ann"},{"age":3,"name":"Ann"},"app_user:u1"]`}},
		{"a set above the location replaces, removing fields", database.Write{Path: path("users"), Value: map[string]any{
			"u1": map[string]any{"age": 4.0}, "u2": map[string]any{"name": "Bob"}}},
			[]string{
				`["users","demo-p-default-rtdb","users/u1","google.firebase.database.ref.v1.updated",{"age":3,"name":"Ann"},{"age":4},"admin"]`,
				`["users","demo-p-default-rtdb","users/u2","google.firebase.database.ref.v1.created",null,{"name":"Bob"},"admin"]`,
			}},
		{"a multi-path update at the root, one event per user", database.Write{Op: database.OpUpdate, Value: map[string]any{
			"users/u1/age": 5.0, "users/u1/name": "Ann", "users/u2": nil, "elsewhere": true}},
			[]string{
				`["users","demo-p-default-rtdb","users/u1","google.firebase.database.ref.v1.updated",{"age":4},{"age":5,"name":"Ann"},"admin"]`,
				`["users","demo-p-default-rtdb","users/u2","google.firebase.database.ref.v1.deleted",{"name":"Bob"},null,"admin"]`,
			}},
		{"the same data again changes nothing", database.Write{Path: path("users/u1/age"), Value: 5.0}, nil},
		{"a named instance", database.Write{NS: "other", Path: path("rooms"), Value: map[string]any{"r1": map[string]any{"topic": "x"}}},
			[]string{`["rooms","other","rooms/r1","google.firebase.database.ref.v1.created",null,{"topic":"x"},"admin"]`}},
		{"an import fires nothing", database.Write{Path: path("users/u9"), Value: "x", Import: true}, nil},
	} {
		write(step.w)
		if got := fn.take(); !reflect.DeepEqual(got, step.want) {
			t.Errorf("%s: the functions saw\n%s\nwant\n%s", step.name, got, step.want)
		}
	}
}
