package emulator

import (
	"fmt"
	"strings"

	"github.com/loupe-dev/loupe/internal/database"
	"github.com/loupe-dev/loupe/internal/triggers"
)

// Publisher takes the database's events: the functions' trigger table.
type Publisher interface {
	Publish(events ...triggers.Event)
}

// SetPublisher has every committed write published as a Realtime Database
// event, once it is durable; imports, clearing and REST writes with
// disableTriggers=true publish nothing. The trigger table matches each
// trigger's ref pattern against the write (triggers.DataWrite).
func (s *Service) SetPublisher(p Publisher) {
	s.Engine.Subscribe(func(c *database.Commit) {
		if c.Import {
			return
		}
		p.Publish(triggers.Event{
			ID:       fmt.Sprintf("%d-%d", c.Time.UnixNano(), c.Seq),
			Source:   triggers.Database,
			Project:  s.env.ProjectID,
			Instance: c.NS,
			Resource: strings.Join(c.Path, "/"),
			Time:     c.Time,
			Auth:     principal(c),
			Write:    commitWrite{c},
		})
	})
}

// principal is who made a commit, as a database event's auth tells it: nil
// for the Admin SDKs.
func principal(c *database.Commit) *triggers.Principal {
	switch {
	case c.Caller.Owner:
		return nil
	case !c.Caller.Authenticated():
		return &triggers.Principal{Type: "unauthenticated"}
	}
	return &triggers.Principal{Type: "app_user", ID: c.Caller.UID, Token: c.Caller.Claims}
}

// commitWrite is a commit as the trigger table matches it.
type commitWrite struct{ c *database.Commit }

// Paths implements triggers.DataWrite.
func (w commitWrite) Paths() [][]string {
	out := make([][]string, len(w.c.Changes))
	for i, ch := range w.c.Changes {
		out[i] = ch.Path
	}
	return out
}

// Changed implements triggers.DataWrite.
func (w commitWrite) Changed(path []string) []string {
	before, after := w.c.Before.At(path), w.c.After.At(path)
	var out []string
	before.Each(func(k string, b *database.Node) bool {
		if a := after.Child(k); a != b && !database.Equal(a, b) {
			out = append(out, k)
		}
		return true
	})
	after.Each(func(k string, _ *database.Node) bool {
		if before.Child(k).IsEmpty() {
			out = append(out, k)
		}
		return true
	})
	return out
}

// At implements triggers.DataWrite: the data before, and the change that
// turns it into the data after as the functions SDKs apply it (a child set
// to null is removed, an object merges into an object).
func (w commitWrite) At(path []string) ([]string, []byte, bool) {
	before, after := w.c.Before.At(path), w.c.After.At(path)
	if before == after || database.Equal(before, after) {
		return nil, nil, false
	}
	kind := triggers.DatabaseUpdated
	switch {
	case before.IsEmpty():
		kind = triggers.DatabaseCreated
	case after.IsEmpty():
		kind = triggers.DatabaseDeleted
	}
	b := []byte(`{"data":`)
	b = before.AppendJSON(b, false)
	b = append(b, `,"delta":`...)
	b = appendDelta(b, before, after)
	return []string{kind, triggers.DatabaseWritten}, append(b, '}'), true
}

// appendDelta appends the change from before to after: after itself unless
// both are objects, else the children that changed (null for a removed one),
// each as its own change.
func appendDelta(b []byte, before, after *database.Node) []byte {
	if before.Kind() != database.Object || after.Kind() != database.Object {
		return after.AppendJSON(b, false)
	}
	b = append(b, '{')
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = database.AppendString(b, k)
		b = append(b, ':')
	}
	before.Each(func(k string, c *database.Node) bool {
		if after.Child(k).IsEmpty() {
			key(k)
			b = append(b, "null"...)
		}
		return true
	})
	after.Each(func(k string, a *database.Node) bool {
		if c := before.Child(k); c != a && !database.Equal(c, a) {
			key(k)
			b = appendDelta(b, c, a)
		}
		return true
	})
	return append(b, '}')
}
