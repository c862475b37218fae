package functions

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
)

// maxLogLines bounds the workers' log lines kept in memory.
const maxLogLines = 2000

// LogLine is one line a worker wrote, or one of loupe's notes about it.
type LogLine struct {
	// Seq numbers lines from 1, so a reader asks for those after the last it saw.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	// Stream is stdout or stderr, or loupe for loupe's own notes: a failed
	// build's output, the process's exits and restarts.
	Stream string `json:"stream"`
	// Codebase is the worker's codebase; Function the function whose
	// invocation wrote the line and Run that invocation's id, when known: a
	// structured line labelled with its execution_id (loupe's Node.js
	// worker labels every line of an invocation, functions-framework-go's
	// LogWriter those written through it), or a plain line read while its
	// codebase had exactly one run under way.
	Codebase string `json:"codebase,omitempty"`
	Function string `json:"function,omitempty"`
	Run      string `json:"run,omitempty"`
	// Severity is Cloud Logging's: DEBUG, INFO, WARNING, ERROR, … for a
	// structured line (a JSON object with "severity", as the SDKs' loggers
	// write), DEFAULT for a plain one.
	Severity string `json:"severity"`
	Text     string `json:"text"`
	// Fields are a structured line's other fields.
	Fields map[string]any `json:"fields,omitempty"`
}

// processLog keeps the newest maxLogLines lines of the workers, and writes
// each to loupe's log (service=functions, with codebase, function, run and
// severity).
type processLog struct {
	logger *slog.Logger
	// runs, when set, attributes lines to the runs under way.
	runs  *runLog
	mu    sync.Mutex
	lines []LogLine
	seq   int64
}

// writer returns a writer that records each line written to it under
// stream and codebase, and hands each to seen when it is not nil.
func (l *processLog) writer(stream, codebase string, seen func(LogLine)) io.Writer {
	return &lineWriter{log: l, stream: stream, codebase: codebase, seen: seen}
}

// lineWriter splits what is written into lines for a processLog; a line
// longer than maxLineBytes is cut there.
type lineWriter struct {
	log              *processLog
	stream, codebase string
	seen             func(LogLine)
	partial          []byte
}

func (w *lineWriter) emit(text []byte) {
	line := w.log.add(parseLine(w.stream, w.codebase, text))
	if w.seen != nil {
		w.seen(line)
	}
}

const maxLineBytes = 16 << 10

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = append(w.partial, p...)
			if len(w.partial) >= maxLineBytes {
				w.emit(w.partial)
				w.partial = w.partial[:0]
			}
			break
		}
		w.emit(append(w.partial, p[:i]...))
		w.partial = w.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// labelsField is where Cloud Logging's structured lines carry their labels
// (execution_id among them).
const labelsField = "logging.googleapis.com/labels"

// parseLine reads a structured line (a JSON object with a severity or a
// message, as the firebase-functions logger, loupe's Node.js worker and
// functions-framework-go's LogWriter write) or takes a plain one as it is.
func parseLine(stream, codebase string, text []byte) LogLine {
	line := LogLine{Stream: stream, Codebase: codebase, Severity: "DEFAULT", Text: string(text)}
	var fields map[string]any
	if len(text) == 0 || text[0] != '{' || json.Unmarshal(text, &fields) != nil {
		return line
	}
	severity, hasSeverity := fields["severity"].(string)
	message, hasMessage := fields["message"].(string)
	if !hasSeverity && !hasMessage {
		return line
	}
	if hasSeverity {
		line.Severity = strings.ToUpper(severity)
	}
	line.Text = message
	line.Function, _ = fields["loupe.function"].(string)
	if labels, ok := fields[labelsField].(map[string]any); ok {
		line.Run, _ = labels["execution_id"].(string)
		delete(labels, "execution_id")
		if len(labels) == 0 {
			delete(fields, labelsField)
		}
	}
	delete(fields, "severity")
	delete(fields, "message")
	delete(fields, "loupe.function")
	if len(fields) > 0 {
		line.Fields = fields
	}
	return line
}

// slogLevel maps a Cloud Logging severity to loupe's log level.
func slogLevel(severity string) slog.Level {
	switch severity {
	case "DEBUG":
		return slog.LevelDebug
	case "WARNING", "NOTICE":
		return slog.LevelWarn
	case "ERROR", "CRITICAL", "ALERT", "EMERGENCY":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// note records one of loupe's own notes about a codebase.
func (l *processLog) note(codebase, severity, text string) {
	l.add(LogLine{Stream: "loupe", Codebase: codebase, Severity: severity, Text: text})
}

// add records line, attributed to its run when it is known, and returns it
// as recorded.
func (l *processLog) add(line LogLine) LogLine {
	line.Time = time.Now().UTC()
	if l.runs != nil && line.Stream != "loupe" {
		run, ok := l.runs.byID(line.Run)
		if line.Run == "" {
			run, ok = l.runs.sole(line.Codebase)
		}
		if ok {
			line.Run, line.Function = run.ID, cmp.Or(line.Function, run.Function)
		}
	}
	l.mu.Lock()
	l.seq++
	line.Seq = l.seq
	l.lines = append(l.lines, line)
	if over := len(l.lines) - maxLogLines; over > 0 {
		l.lines = append(l.lines[:0:0], l.lines[over:]...)
	}
	l.mu.Unlock()
	// loupe's notes about a codebase are in loupe's log already; those
	// about a run are not.
	if l.logger != nil && (line.Stream != "loupe" || line.Run != "") {
		attrs := []any{"codebase", line.Codebase, "severity", line.Severity}
		if line.Function != "" {
			attrs = append(attrs, "function", line.Function, "run", line.Run)
		}
		for k, v := range line.Fields {
			attrs = append(attrs, k, v)
		}
		l.logger.Log(context.Background(), slogLevel(line.Severity), line.Text, attrs...)
	}
	return line
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

// last returns the newest n lines of codebase, oldest first.
func (l *processLog) last(codebase string, n int) []LogLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []LogLine
	for i := len(l.lines) - 1; i >= 0 && len(out) < n; i-- {
		if l.lines[i].Codebase == codebase {
			out = append(out, l.lines[i])
		}
	}
	slices.Reverse(out)
	return out
}

// logs answers GET /emulator/v1/functions/logs?after=N: {"lines": [...]},
// the workers' lines numbered after N (all kept lines without it),
// narrowed by the optional query parameters function, codebase and run.
func (s *Service) logs(w http.ResponseWriter, r *http.Request) {
	after, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if err != nil && r.URL.Query().Has("after") {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "after must be a line number"))
		return
	}
	q := r.URL.Query()
	lines := slices.DeleteFunc(s.log.after(after), func(l LogLine) bool {
		return (q.Has("function") && l.Function != q.Get("function")) || (q.Has("codebase") && l.Codebase != q.Get("codebase")) ||
			(q.Has("run") && l.Run != q.Get("run"))
	})
	httpjson.Write(w, http.StatusOK, map[string]any{"lines": lines})
}

// listRuns answers GET /emulator/v1/functions/runs: {"runs": [...]}, the
// kept runs of every function, oldest first, narrowed by the optional query
// parameters function and codebase.
func (s *Service) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	runs := s.runs.list(func(run Run) bool {
		return (!q.Has("function") || run.Function == q.Get("function")) && (!q.Has("codebase") || run.Codebase == q.Get("codebase"))
	})
	httpjson.Write(w, http.StatusOK, map[string]any{"runs": runs})
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
