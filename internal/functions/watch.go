package functions

import (
	"context"
	"io/fs"
	"path"
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
// codebase's files that its runtime watches (Runtime.Watched) and that
// firebase.json's ignore globs do not name, until ctx ends. It compares
// names, sizes and modification times, so it needs no file events.
func (c *codebase) watchSource(ctx context.Context) <-chan struct{} {
	changed := make(chan struct{}, 1)
	go func() {
		built := c.sourceStamp() // what the first build saw (or close to it)
		seen := built
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			now := c.sourceStamp()
			if now != seen {
				seen = now // still moving: wait for it to hold still
				continue
			}
			if now != built {
				built = now
				c.logger.Info("functions source changed; rebuilding", "source", c.source)
				select {
				case changed <- struct{}{}:
				default: // a rebuild is already due
				}
			}
		}
	}()
	return changed
}

// sourceStamp sums up the watched files of the codebase as one string.
func (c *codebase) sourceStamp() string {
	var b strings.Builder
	output := ""
	if o, ok := c.runtime.(interface{ Output(dir string) string }); ok {
		output = o.Output(c.source)
	}
	_ = filepath.WalkDir(c.source, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file removed during the walk: the next look sees it
		}
		if p == c.source {
			return nil
		}
		rel, _ := filepath.Rel(c.source, p)
		rel = filepath.ToSlash(rel)
		if c.ignored(rel) || rel == output || !c.runtime.Watched(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		b.WriteString(p + "\x00" + info.ModTime().String() + "\x00" + strconv.FormatInt(info.Size(), 10) + "\n")
		return nil
	})
	return b.String()
}

// ignored reports whether firebase.json's ignore globs name the file at rel
// (a glob matches the path or any folder above it, as firebase-tools'
// ignore does).
func (c *codebase) ignored(rel string) bool {
	for _, g := range c.config.Ignore {
		for p := rel; p != "." && p != ""; p = path.Dir(p) {
			if ok, _ := path.Match(strings.TrimSuffix(g, "/**"), p); ok {
				return true
			}
		}
	}
	return false
}
