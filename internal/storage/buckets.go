package storage

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
)

// Buckets lists the buckets that hold or held an object, or were created, by name.
func (s *Store) Buckets() []string {
	entries, _ := os.ReadDir(filepath.Join(s.root, "buckets"))
	var names []string
	for _, e := range entries {
		if name, err := url.PathUnescape(e.Name()); err == nil && e.IsDir() && validBucket(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// gcsBuckets answers buckets.list (GET /storage/v1/b?project=p): every
// bucket, whatever the project, as the official emulator has one namespace.
func (s *Service) gcsBuckets(w http.ResponseWriter, _ *http.Request) {
	items := []map[string]any{}
	for _, name := range s.store.Buckets() {
		items = append(items, map[string]any{"kind": "storage#bucket", "id": name, "name": name,
			"selfLink": "/storage/v1/b/" + name, "storageClass": "STANDARD", "location": "US"})
	}
	writeJSON(w, map[string]any{"kind": "storage#buckets", "items": items})
}
