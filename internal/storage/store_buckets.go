package storage

import (
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
		if name, err := url.PathUnescape(e.Name()); err == nil && e.IsDir() && ValidBucket(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
