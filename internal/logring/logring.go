// Package logring keeps loupe's recent log records, every service's, in a
// bounded ring: the console's Logs tab and GET /emulator/v1/logs read them.
// A Handler wraps the handler loupe logs to the terminal with, so every
// logger derived from the app's (each service's, With("service", name))
// feeds the ring; the ring holds at most Capacity entries, each message and
// payload value cut to a bounded size, so it never grows without bound.
package logring

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loupe-dev/loupe/internal/ring"
)

// Levels, as entries name them (the functions' severities map onto them).
const (
	Debug = "DEBUG"
	Info  = "INFO"
	Warn  = "WARN"
	Error = "ERROR"
)

// Entry is one log record.
type Entry struct {
	ID   int64     `json:"id"`
	Time time.Time `json:"time"`
	// Level is DEBUG, INFO, WARN or ERROR.
	Level string `json:"level"`
	// Service is the service that logged it (firestore, functions, hub, …;
	// loupe for the app itself).
	Service  string `json:"service"`
	Codebase string `json:"codebase,omitempty"`
	Function string `json:"function,omitempty"`
	Message  string `json:"message"`
	// Payload holds the record's other attributes.
	Payload map[string]any `json:"payload,omitempty"`
}

// DefaultCapacity is how many entries a Ring keeps unless told otherwise.
const DefaultCapacity = 5000

// maxText bounds a message and each payload string, in bytes.
const maxText = 4 << 10

// Ring is a bounded, concurrency-safe log of entries; readers page with an
// id cursor or wait for new entries.
type Ring struct{ *ring.Ring[Entry] }

// New returns a ring keeping the last capacity entries (DefaultCapacity when
// capacity is not positive).
func New(capacity int) *Ring {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	return &Ring{ring.New[Entry](capacity)}
}

// Add records e with the next id (and the current time when it has none,
// level INFO when it names none).
func (r *Ring) Add(e Entry) {
	if Rank(e.Level) < 0 {
		e.Level = Info
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	e.Message = cut(e.Message)
	r.Ring.Add(func(id int64) Entry { e.ID = id; return e })
}

// After returns the entries with an id above after still held that keep
// accepts (nil: all), oldest first, at most limit (0: all) of the newest of
// them; latest is the newest id recorded so far.
func (r *Ring) After(after int64, limit int, keep func(*Entry) bool) (entries []Entry, latest int64) {
	entries, latest = r.Ring.After(after, limit, keep)
	slices.Reverse(entries)
	return entries, latest
}

// cut bounds s to maxText bytes, on a rune boundary, marking the cut.
func cut(s string) string {
	if len(s) <= maxText {
		return s
	}
	end := maxText
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "… (cut)"
}

// Handler is a slog.Handler that records every record of level Info and
// above (and those next takes) in a Ring, then hands next the records it is
// enabled for.
type Handler struct {
	next   slog.Handler
	ring   *Ring
	attrs  []slog.Attr // from WithAttrs, group-qualified
	groups []string
}

// NewHandler returns a handler feeding ring and then next.
func NewHandler(ring *Ring, next slog.Handler) *Handler {
	return &Handler{next: next, ring: ring}
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, rec slog.Record) error {
	h.ring.Add(h.entry(rec))
	if h.next.Enabled(ctx, rec.Level) {
		return h.next.Handle(ctx, rec)
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(as)
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), h.qualify(as)...)
	return &c
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.next = h.next.WithGroup(name)
	c.groups = append(append([]string(nil), h.groups...), name)
	return &c
}

// qualify prefixes attribute keys with the open groups ("group.key").
func (h *Handler) qualify(as []slog.Attr) []slog.Attr {
	if len(h.groups) == 0 {
		return as
	}
	prefix := strings.Join(h.groups, ".") + "."
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = slog.Attr{Key: prefix + a.Key, Value: a.Value}
	}
	return out
}

// entry is rec as an Entry: service, codebase, function and severity
// attributes become its fields, the others its payload.
func (h *Handler) entry(rec slog.Record) Entry {
	e := Entry{Time: rec.Time, Level: levelName(rec.Level), Service: "loupe", Message: rec.Message}
	take := func(a slog.Attr) {
		v := a.Value.Resolve()
		switch a.Key {
		case "service":
			e.Service = v.String()
			return
		case "codebase":
			e.Codebase = v.String()
			return
		case "function":
			e.Function = v.String()
			return
		case "severity":
			if l, ok := severityLevel(v.String()); ok {
				e.Level = l
				return
			}
		}
		if e.Payload == nil {
			e.Payload = map[string]any{}
		}
		e.Payload[a.Key] = payloadValue(v)
	}
	for _, a := range h.attrs {
		take(a)
	}
	rec.Attrs(func(a slog.Attr) bool {
		for _, q := range h.qualify([]slog.Attr{a}) {
			take(q)
		}
		return true
	})
	return e
}

// payloadValue is v as a JSON-friendly value, strings cut to maxText.
func payloadValue(v slog.Value) any {
	switch v.Kind() {
	case slog.KindString:
		return cut(v.String())
	case slog.KindInt64:
		return v.Int64()
	case slog.KindUint64:
		return v.Uint64()
	case slog.KindFloat64:
		return v.Float64()
	case slog.KindBool:
		return v.Bool()
	case slog.KindDuration:
		return v.Duration().String()
	case slog.KindTime:
		return v.Time().UTC().Format(time.RFC3339Nano)
	case slog.KindGroup:
		m := map[string]any{}
		for _, a := range v.Group() {
			m[a.Key] = payloadValue(a.Value.Resolve())
		}
		return m
	}
	if err, ok := v.Any().(error); ok {
		return cut(err.Error())
	}
	return cut(fmt.Sprint(v.Any()))
}

func levelName(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return Error
	case l >= slog.LevelWarn:
		return Warn
	case l >= slog.LevelInfo:
		return Info
	}
	return Debug
}

// severityLevel maps a Cloud Logging severity (what functions log with) to
// a level.
func severityLevel(s string) (string, bool) {
	switch strings.ToUpper(s) {
	case "DEBUG":
		return Debug, true
	case "INFO", "NOTICE", "DEFAULT":
		return Info, true
	case "WARNING", "WARN":
		return Warn, true
	case "ERROR", "CRITICAL", "ALERT", "EMERGENCY":
		return Error, true
	}
	return "", false
}

// Rank orders levels, DEBUG lowest; -1 for an unknown name.
func Rank(level string) int {
	switch strings.ToUpper(level) {
	case Debug:
		return 0
	case Info:
		return 1
	case Warn, "WARNING":
		return 2
	case Error:
		return 3
	}
	return -1
}
