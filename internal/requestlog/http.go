package requestlog

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/server"
)

// Name implements server.Service.
func (l *Log) Name() string { return "requests" }

// Register implements server.Service: the log's admin endpoints,
//
//	GET    /emulator/v1/requests        entries, newest first (or a live event stream)
//	GET    /emulator/v1/requests/{id}   one entry, with the rules source
//	DELETE /emulator/v1/requests        forget every entry
func (l *Log) Register(routes *server.Routes) {
	routes.Admin("GET /emulator/v1/requests", l.list)
	routes.Admin("DELETE /emulator/v1/requests", l.clear)
	routes.Admin("GET /emulator/v1/requests/{id}", l.get)
}

func badRequest(w http.ResponseWriter, message string) {
	httpjson.Error(w, errs.New(errs.InvalidArgument, message))
}

// filter is a list request's ?service=&method=&outcome=&project=&path= (a
// path prefix).
func filter(r *http.Request) func(*Entry) bool {
	q := r.URL.Query()
	service, method, outcome, project, path := q.Get("service"), q.Get("method"), q.Get("outcome"), q.Get("project"), q.Get("path")
	if service == "" && method == "" && outcome == "" && project == "" && path == "" {
		return nil
	}
	return func(e *Entry) bool {
		return (service == "" || e.Service == service) && (method == "" || e.Method == method) &&
			(outcome == "" || e.Outcome == outcome) && (project == "" || e.Project == project) && strings.HasPrefix(e.Path, path)
	}
}

// withoutSource drops the rules source, which only the single-entry answer carries.
func withoutSource(es []Entry) []Entry {
	for i := range es {
		if es[i].Rules != nil && es[i].Rules.Source != "" {
			r := *es[i].Rules
			r.Source = ""
			es[i].Rules = &r
		}
	}
	return es
}

// list answers {"requests": [newest first], "latest": id} for ?after=ID
// (default 0) and ?limit=N (default 100, at most the log's capacity), or,
// when the client accepts text/event-stream, streams every entry after
// ?after (or Last-Event-ID) oldest first, then each new one as it comes.
func (l *Log) list(w http.ResponseWriter, r *http.Request) {
	after, err := cursor(r)
	if err != nil {
		badRequest(w, err.Error())
		return
	}
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		l.stream(w, r, after)
		return
	}
	limit := 100
	if s := r.URL.Query().Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 {
			badRequest(w, "limit must be a positive integer")
			return
		}
	}
	entries, latest := l.After(after, min(limit, l.Cap()), filter(r))
	if entries == nil {
		entries = []Entry{} // an empty list, not null, while nothing is logged
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"requests": withoutSource(entries), "latest": latest})
}

// Open implements server.Opener: when ctx ends (the server stops), the
// log's live streams end, so that they do not hold up shutdown.
func (l *Log) Open(ctx context.Context) error {
	context.AfterFunc(ctx, l.Close)
	return nil
}

// cursor is ?after=, or the Last-Event-ID of a reconnecting event stream.
func cursor(r *http.Request) (int64, error) {
	s := r.URL.Query().Get("after")
	if s == "" {
		s = r.Header.Get("Last-Event-ID")
	}
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("after must be a request id (a non-negative integer)")
	}
	return n, nil
}

// keepAlive is how often an idle event stream sends a comment, so that
// proxies and browsers keep it open.
const keepAlive = 15 * time.Second

// stream serves the log as server-sent events: "event: request", the
// entry's id as the event id, its JSON as data. An entry updated after it
// was sent (a stream that ended) is sent again, without an event id, so
// that a reconnecting reader's Last-Event-ID stays the newest entry.
func (l *Log) stream(w http.ResponseWriter, r *http.Request, after int64) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": loupe requests\n\n")
	flusher.Flush()
	keep := filter(r)
	ctx := r.Context()
	rev := l.Revision() // before the first read: no update after it is missed
	entries, _ := l.After(after, 0, keep)
	slices.Reverse(entries)
	for {
		for _, e := range entries {
			data, err := json.Marshal(withoutSource([]Entry{e})[0])
			if err != nil {
				continue
			}
			if e.ID > after { // new to this reader, not an update of one sent or older
				fmt.Fprintf(w, "id: %d\n", e.ID)
				after = e.ID
			}
			fmt.Fprintf(w, "event: request\ndata: %s\n\n", data)
		}
		flusher.Flush()
		wait, cancel := context.WithTimeout(ctx, keepAlive)
		got := l.WaitChange(wait, rev)
		cancel()
		if ctx.Err() != nil || l.Closed() {
			return
		}
		if !got {
			fmt.Fprint(w, ": keep-alive\n\n")
			flusher.Flush()
			continue
		}
		entries, rev = l.Changed(rev, keep)
	}
}

// get answers one entry, with the rules source it was judged by.
func (l *Log) get(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		badRequest(w, "the request id must be an integer")
		return
	}
	e, ok := l.Get(id)
	if !ok {
		httpjson.Error(w, errs.Errorf(errs.NotFound, "request %d is not in the log (it keeps the last %d)", id, l.Cap()))
		return
	}
	httpjson.Write(w, http.StatusOK, e)
}

func (l *Log) clear(w http.ResponseWriter, _ *http.Request) {
	l.Clear()
	httpjson.Write(w, http.StatusOK, map[string]any{})
}
