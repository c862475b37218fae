package logring

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
)

// Filter is what GET /emulator/v1/logs narrows the log to.
type Filter struct {
	// Services lists the services shown (none: all).
	Services []string
	// MinLevel is the least level shown (0: DEBUG).
	MinLevel int
	// Text is looked for, case-insensitively, in the message, the function
	// and the payload.
	Text string
}

// ParseFilter reads a Filter from the query parameters service (a
// comma-separated list), level (debug, info, warn, error) and q.
func ParseFilter(q map[string][]string) (Filter, error) {
	var f Filter
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	for _, s := range strings.Split(get("service"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			f.Services = append(f.Services, s)
		}
	}
	if l := get("level"); l != "" {
		if f.MinLevel = Rank(l); f.MinLevel < 0 {
			return f, errs.New(errs.InvalidArgument, "level must be debug, info, warn or error")
		}
	}
	f.Text = strings.ToLower(get("q"))
	return f, nil
}

// Match reports whether e passes the filter.
func (f Filter) Match(e *Entry) bool {
	if len(f.Services) > 0 {
		found := false
		for _, s := range f.Services {
			found = found || s == e.Service
		}
		if !found {
			return false
		}
	}
	if Rank(e.Level) < f.MinLevel {
		return false
	}
	if f.Text == "" {
		return true
	}
	if strings.Contains(strings.ToLower(e.Message), f.Text) || strings.Contains(strings.ToLower(e.Function), f.Text) {
		return true
	}
	if len(e.Payload) == 0 {
		return false
	}
	data, _ := json.Marshal(e.Payload)
	return strings.Contains(strings.ToLower(string(data)), f.Text)
}

// keepAlive is how often a following stream with nothing to say sends an
// empty line, so proxies and clients see it alive.
const keepAlive = 25 * time.Second

// ServeHTTP answers GET /emulator/v1/logs: the entries held, oldest first,
// as JSON lines (one Entry a line), narrowed by service, level and q
// (ParseFilter), after the id given as after, at most limit of the newest
// (default 1000); with follow=1 the response stays open and each new
// matching entry follows as it is logged.
func (r *Ring) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	f, err := ParseFilter(q)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	after, limit := int64(0), 1000
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			httpjson.Error(w, errs.New(errs.InvalidArgument, "after must be an entry id"))
			return
		}
	}
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 0 {
			httpjson.Error(w, errs.New(errs.InvalidArgument, "limit must be a count"))
			return
		}
	}
	follow := q.Get("follow") == "1" || q.Get("follow") == "true"
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	entries, latest := r.After(after, limit, f.Match)
	for i := range entries {
		_ = enc.Encode(&entries[i])
	}
	if !follow {
		return
	}
	if flusher != nil {
		flusher.Flush()
	}
	ctx := req.Context()
	for {
		waitCtx, cancel := context.WithTimeout(ctx, keepAlive)
		got := r.Wait(waitCtx, latest)
		cancel()
		if ctx.Err() != nil || r.Closed() {
			return
		}
		if !got {
			_, _ = w.Write([]byte("\n"))
		} else {
			var fresh []Entry
			fresh, latest = r.After(latest, 0, f.Match)
			for i := range fresh {
				if err := enc.Encode(&fresh[i]); err != nil {
					return
				}
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}
