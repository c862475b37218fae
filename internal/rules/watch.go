package rules

import (
	"bytes"
	"context"
	"os"
	"sync"
	"time"
)

// Watcher keeps a compiled ruleset in step with a rules file: Reload recompiles the file when its
// content changed, and a file that does not compile leaves the last good ruleset in force.
type Watcher struct {
	path string
	mu   sync.RWMutex
	rs   *Ruleset
	src  []byte
	err  error
}

// NewWatcher loads path once. The Watcher is returned even when that first load fails (Ruleset is then
// nil until the file exists and compiles), together with the error.
func NewWatcher(path string) (*Watcher, error) {
	w := &Watcher{path: path}
	_, err := w.Reload()
	return w, err
}

// Ruleset returns the last ruleset that compiled, or nil if none has.
func (w *Watcher) Ruleset() *Ruleset {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.rs
}

// Err returns the error of the latest load attempt, nil if it succeeded.
func (w *Watcher) Err() error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.err
}

// Reload rereads the file. changed reports whether the file content differed from the last attempt;
// err is the read or compile error ("file:line:col: message"), in which case the previous ruleset stays.
func (w *Watcher) Reload() (changed bool, err error) {
	src, err := os.ReadFile(w.path)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.err = err
		return false, err
	}
	if w.src != nil && bytes.Equal(src, w.src) {
		return false, w.err
	}
	w.src = src
	rs, err := Compile(string(src), w.path)
	w.err = err
	if err == nil {
		w.rs = rs
	}
	return true, err
}

// Run polls the file every interval until ctx ends, calling report (if non-nil) after each attempt
// on changed content with that attempt's error (nil on success).
func (w *Watcher) Run(ctx context.Context, interval time.Duration, report func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var seen []byte // the content at the previous tick
	seenAny := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			// Content that differs from the previous tick may be a save in
			// progress (editors truncate, then write): wait until it holds
			// still for one interval before compiling it.
			if src, err := os.ReadFile(w.path); err == nil && (!seenAny || !bytes.Equal(src, seen)) {
				seen, seenAny = src, true
				continue
			}
			if changed, err := w.Reload(); changed && report != nil {
				report(err)
			}
		}
	}
}
