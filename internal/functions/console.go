package functions

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
)

// maxLogLines bounds the functions process's log lines kept in memory.
const maxLogLines = 2000

// LogLine is one line the functions process wrote.
type LogLine struct {
	// Seq numbers lines from 1, so a reader asks for those after the last it saw.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	// Stream is stdout or stderr, or loupe for loupe's own notes: a failed
	// build's output, the process's exits and restarts.
	Stream string `json:"stream"`
	Text   string `json:"text"`
}

// processLog keeps the newest maxLogLines lines of the functions process.
type processLog struct {
	mu    sync.Mutex
	lines []LogLine
	seq   int64
}

// writer returns a writer that records each line written to it under
// stream, and copies everything to also.
func (l *processLog) writer(stream string, also io.Writer) io.Writer {
	return io.MultiWriter(also, &lineWriter{log: l, stream: stream})
}

// lineWriter splits what is written into lines for a processLog; a line
// longer than maxLineBytes is cut there.
type lineWriter struct {
	log     *processLog
	stream  string
	partial []byte
}

const maxLineBytes = 16 << 10

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = append(w.partial, p...)
			if len(w.partial) >= maxLineBytes {
				w.log.add(w.stream, string(w.partial))
				w.partial = w.partial[:0]
			}
			break
		}
		w.log.add(w.stream, string(append(w.partial, p[:i]...)))
		w.partial = w.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (l *processLog) add(stream, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	l.lines = append(l.lines, LogLine{Seq: l.seq, Time: time.Now().UTC(), Stream: stream, Text: text})
	if over := len(l.lines) - maxLogLines; over > 0 {
		l.lines = append(l.lines[:0:0], l.lines[over:]...)
	}
}

// after returns the lines numbered after seq, oldest first.
func (l *processLog) after(seq int64) []LogLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []LogLine{}
	for _, line := range l.lines {
		if line.Seq > seq {
			out = append(out, line)
		}
	}
	return out
}

// last returns the newest n lines, oldest first.
func (l *processLog) last(n int) []LogLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]LogLine(nil), l.lines[max(0, len(l.lines)-n):]...)
}

// logs answers GET /emulator/v1/functions/logs?after=N: {"lines": [...]},
// the process's lines numbered after N (all kept lines without it).
func (s *Service) logs(w http.ResponseWriter, r *http.Request) {
	after, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if err != nil && r.URL.Query().Has("after") {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "after must be a line number"))
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"lines": s.log.after(after)})
}

// backgroundTriggers answers PUT /emulator/v1/functions/backgroundTriggers
// {"paused": true|false}, the console's switch of the background triggers
// (the same switch as the Emulator Hub's), with the state it leaves.
func (s *Service) backgroundTriggers(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Paused *bool `json:"paused"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&body); err != nil || body.Paused == nil {
		httpjson.Error(w, errs.New(errs.InvalidArgument, `body must be {"paused": true} or {"paused": false}`))
		return
	}
	s.SetBackgroundTriggers(r.Context(), !*body.Paused)
	httpjson.Write(w, http.StatusOK, map[string]bool{"paused": !s.BackgroundTriggersEnabled()})
}
