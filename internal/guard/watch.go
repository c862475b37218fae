package guard

import (
	"bytes"
	"context"
	"os"
	"sync"
	"time"
)

// Watcher keeps a compiled rules file in step with the file: Reload
// recompiles the file when its content changed, and a file that does not
// compile leaves the last good compilation in force. T is what compile makes
// of a file (a *rules.Ruleset for Firestore and Storage rules).
type Watcher[T any] struct {
	path    string
	compile func(src []byte, path string) (T, error)
	mu      sync.RWMutex
	rs      T
	src     []byte
	err     error
}

// NewWatcher loads path once with compile. The Watcher is returned even when
// that first load fails (Ruleset is then the zero T until the file exists and
// compiles), together with the error.
func NewWatcher[T any](path string, compile func(src []byte, path string) (T, error)) (*Watcher[T], error) {
	w := &Watcher[T]{path: path, compile: compile}
	_, err := w.Reload()
	return w, err
}

// Ruleset returns the last compilation that succeeded, or the zero T if none has.
func (w *Watcher[T]) Ruleset() T {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.rs
}

// Err returns the error of the latest load attempt, nil if it succeeded.
func (w *Watcher[T]) Err() error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.err
}

// Reload rereads the file. changed reports whether the file content differed from the last attempt;
// err is the read or compile error ("file:line:col: message"), in which case the previous ruleset stays.
func (w *Watcher[T]) Reload() (changed bool, err error) {
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
	rs, err := w.compile(src, w.path)
	w.err = err
	if err == nil {
		w.rs = rs
	}
	return true, err
}

// Run polls the file every interval until ctx ends, calling report (if non-nil) after each attempt
// on changed content with that attempt's error (nil on success).
func (w *Watcher[T]) Run(ctx context.Context, interval time.Duration, report func(error)) {
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
