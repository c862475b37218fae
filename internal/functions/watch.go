package functions

import (
	"context"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// watchInterval is how often the functions source is looked at; a change is
// built once the source has held still for one interval (an editor's save,
// or a checkout touching many files, is seen once).
const watchInterval = 500 * time.Millisecond

// watchSource reports on the returned channel each settled change to the
// files go build reads (the module's .go files other than tests, go.mod,
// go.sum) and to triggers.json, until ctx ends. Like go build, it skips
// testdata and folders whose names start with "." or "_". It compares
// names, sizes and modification times, so it needs no file events.
func (s *Service) watchSource(ctx context.Context) <-chan struct{} {
	changed := make(chan struct{}, 1)
	go func() {
		built := sourceStamp(s.source) // what the first build saw (or close to it)
		seen := built
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			now := sourceStamp(s.source)
			if now != seen {
				seen = now // still moving: wait for it to hold still
				continue
			}
			if now != built {
				built = now
				s.env.Logger.Info("functions source changed; rebuilding", "source", s.source)
				select {
				case changed <- struct{}{}:
				default: // a rebuild is already due
				}
			}
		}
	}()
	return changed
}

// sourceStamp sums up the watched files under dir as one string.
func sourceStamp(dir string) string {
	var b strings.Builder
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file removed during the walk: the next look sees it
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		watched := name == "go.mod" || name == "go.sum" || name == "triggers.json" ||
			(strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go"))
		if !watched {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		b.WriteString(path + "\x00" + info.ModTime().String() + "\x00" + strconv.FormatInt(info.Size(), 10) + "\n")
		return nil
	})
	return b.String()
}
