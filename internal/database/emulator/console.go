package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/loupe-dev/loupe/internal/database"
	"github.com/loupe-dev/loupe/internal/errs"
)

// The console's endpoints: what the Realtime Database tab needs beside
// REST, which answers a location with everything under it (or, shallow,
// with objects and true leaves alike as true).

// maxListed bounds the children one listing answers.
const maxListed = 1000

// namespaces answers GET /emulator/v1/database/namespaces: the default
// namespace and every namespace that holds data.
func (s *Service) namespaces(w http.ResponseWriter, _ *http.Request) {
	def := s.DefaultNamespace()
	names := []string{def}
	for _, ns := range s.Engine.Namespaces() {
		if ns != def {
			names = append(names, ns)
		}
	}
	data, _ := json.Marshal(map[string]any{"default": def, "namespaces": names})
	writeJSON(w, http.StatusOK, data, false)
}

// listedChild is one child of a listing: a leaf with its value, or an
// object with how many children it has.
type listedChild struct {
	Key      string          `json:"key"`
	Value    json.RawMessage `json:"value,omitempty"`
	Children int             `json:"children,omitempty"`
}

// children answers GET /emulator/v1/database/children?ns=&path=&startAfter=&limit=:
// the location's value when it is a leaf, else its children in key order
// (at most limit, default and at most 1000), each leaf with its value and
// each object with its number of children; next is the key to start after
// for the rest.
func (s *Service) children(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ns := s.namespace(r)
	if err := database.CheckNamespace(ns); err != nil {
		restError(w, err)
		return
	}
	p, err := database.ParsePath(q.Get("path"))
	if err != nil {
		restError(w, err)
		return
	}
	limit := maxListed
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 {
			restError(w, errs.New(errs.InvalidArgument, "limit must be a positive integer"))
			return
		}
		limit = min(limit, maxListed)
	}
	n := s.Engine.Root(ns).At(p)
	out := struct {
		Path     string          `json:"path"`
		Exists   bool            `json:"exists"`
		Value    json.RawMessage `json:"value,omitempty"`
		Total    int             `json:"total"`
		Children []listedChild   `json:"children"`
		Next     string          `json:"next,omitempty"`
	}{Path: p.String(), Exists: !n.IsEmpty(), Children: []listedChild{}}
	if n.IsLeaf() {
		out.Value = n.JSON()
	} else if !n.IsEmpty() {
		out.Total = n.NumChildren()
		after, hasAfter := q.Get("startAfter"), q.Has("startAfter")
		n.EachFrom(after, func(k string, c *database.Node) bool {
			if hasAfter && k == after {
				return true
			}
			if len(out.Children) == limit {
				out.Next = out.Children[limit-1].Key
				return false
			}
			lc := listedChild{Key: k}
			if c.IsLeaf() {
				lc.Value = c.JSON()
			} else {
				lc.Children = c.NumChildren()
			}
			out.Children = append(out.Children, lc)
			return true
		})
	}
	data, _ := json.Marshal(out)
	writeJSON(w, http.StatusOK, data, false)
}

// changes answers GET /emulator/v1/database/changes?ns=: Server-Sent
// Events, a "change" event with the paths each write changed
// ({"paths": ["/a/b"]}), and "lagged" when the client fell behind and
// some were dropped (reload everything shown). The data itself is not
// sent, nor built: the engine names the paths (WatchPaths), and the console
// reloads the locations it shows that a path touches.
func (s *Service) changes(w http.ResponseWriter, r *http.Request) {
	ns := s.namespace(r)
	if err := database.CheckNamespace(ns); err != nil {
		restError(w, err)
		return
	}
	events := make(chan []string, 256)
	lagged := make(chan struct{}, 1)
	cancel, err := s.Engine.WatchPaths(ns, func(changed []database.Path) {
		paths := make([]string, len(changed))
		for i, p := range changed {
			paths[i] = p.String()
		}
		select {
		case events <- paths:
		default:
			select {
			case lagged <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		restError(w, err)
		return
	}
	defer cancel()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, ": live\n\n")
	_ = rc.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case paths := <-events:
			data, _ := json.Marshal(map[string]any{"paths": paths})
			if _, err := fmt.Fprintf(w, "event: change\ndata: %s\n\n", data); err != nil {
				return
			}
		case <-lagged:
			if _, err := fmt.Fprint(w, "event: lagged\ndata: {}\n\n"); err != nil {
				return
			}
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		case <-r.Context().Done():
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
