package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/httpjson"
)

// databases answers GET /emulator/v1/firestore/databases: every database
// that holds documents, with how many.
func (s *Service) databases(w http.ResponseWriter, _ *http.Request) {
	httpjson.Write(w, http.StatusOK, map[string]any{"databases": s.opts.Firestore.Databases()})
}

// deleteTree answers DELETE /emulator/v1/projects/{p}/databases/{d}/documents/{path}:
// the collection or document at path is deleted with everything under it.
// With Accept: application/x-ndjson the answer streams how many of the
// documents found under it are deleted (see progressAnswer).
func (s *Service) deleteTree(w http.ResponseWriter, r *http.Request) {
	name := fmt.Sprintf("projects/%s/databases/%s/documents/%s", r.PathValue("project"), r.PathValue("database"), strings.Trim(r.PathValue("path"), "/"))
	answer := newProgressAnswer(w, r)
	n, err := s.opts.Firestore.DeleteTreeWithProgress(r.Context(), name, answer.progress())
	if err != nil {
		answer.finish(nil, err)
		return
	}
	answer.finish(map[string]int{"deleted": n}, nil)
}

// maxChangePaths bounds the paths one change event lists; a bigger commit
// says how many it left out.
const maxChangePaths = 100

// changeEvent is one commit as GET /emulator/v1/firestore/changes streams it.
type changeEvent struct {
	Time time.Time `json:"time"`
	// Paths are "projects/p/databases/d/documents/…" names of changed documents.
	Paths []string `json:"paths"`
	// More counts changed documents left out of Paths.
	More int `json:"more,omitempty"`
}

// changes streams Server-Sent Events: one "change" event per commit, so the
// console refreshes what it shows; a "lagged" event when the client fell
// behind and some commits were dropped (the console then refreshes all).
func (s *Service) changes(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	events := make(chan changeEvent, 64)
	lagged := make(chan struct{}, 1)
	unsubscribe := s.opts.Firestore.Subscribe(func(c firestore.Commit) {
		ev := changeEvent{Time: c.Time, Paths: []string{}}
		for _, ch := range c.Changes {
			if len(ev.Paths) == maxChangePaths {
				ev.More++
				continue
			}
			ev.Paths = append(ev.Paths, ch.Database+"/documents/"+ch.Path)
		}
		select {
		case events <- ev:
		default:
			select {
			case lagged <- struct{}{}:
			default:
			}
		}
	})
	defer unsubscribe()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, ": live\n\n")
	flusher.Flush()
	keepAlive := time.NewTicker(25 * time.Second)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-keepAlive.C:
			_, _ = fmt.Fprint(w, ": keep-alive\n\n")
		case <-lagged:
			_, _ = fmt.Fprint(w, "event: lagged\ndata: {}\n\n")
		case ev := <-events:
			data, _ := json.Marshal(ev)
			_, _ = fmt.Fprintf(w, "event: change\ndata: %s\n\n", data)
		}
		flusher.Flush()
	}
}
