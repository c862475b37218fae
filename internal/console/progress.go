package console

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
)

// ndjson is the media type of the streamed answers: one JSON object a line.
const ndjson = "application/x-ndjson"

// progressLine is one line of a streamed answer while the work goes on.
type progressLine struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// progressAnswer answers a long operation (an import, a recursive delete).
// A request that accepts application/x-ndjson is answered, once the
// operation knows how many documents it has to do, with JSON lines
// {"done": N, "total": M} as it goes (done grows, by about a hundredth of
// total at least, the first line has done 0 and the last done == total),
// then one last line that is the usual answer: the result, or the error as
// {"error": {"code", "message", "status"}}. An error before the first line is
// answered as without the header: its own status and the error body.
type progressAnswer struct {
	w       http.ResponseWriter
	stream  bool
	mu      sync.Mutex
	started bool
	last    int
}

func newProgressAnswer(w http.ResponseWriter, r *http.Request) *progressAnswer {
	return &progressAnswer{w: w, stream: strings.Contains(r.Header.Get("Accept"), ndjson)}
}

// progress is the operation's progress callback (nil unless streaming).
func (a *progressAnswer) progress() func(done, total int) {
	if !a.stream {
		return nil
	}
	return a.report
}

func (a *progressAnswer) report(done, total int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started && (done <= a.last || (done < total && done-a.last < max(1, total/100))) {
		return
	}
	if !a.started {
		a.start()
	}
	a.last = done
	a.line(progressLine{Done: done, Total: total})
}

func (a *progressAnswer) start() {
	a.started = true
	h := a.w.Header()
	h.Set("Content-Type", ndjson)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	a.w.WriteHeader(http.StatusOK)
}

func (a *progressAnswer) line(v any) {
	_ = json.NewEncoder(a.w).Encode(v) // Encode ends the line
	if f, ok := a.w.(http.Flusher); ok {
		f.Flush()
	}
}

// finish writes the result, or err when not nil, as the last line once
// streaming, else as the whole answer.
func (a *progressAnswer) finish(result any, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started {
		if err != nil {
			httpjson.Error(a.w, err)
		} else {
			httpjson.Write(a.w, http.StatusOK, result)
		}
		return
	}
	if err != nil {
		_, name, status := errs.KindOf(err).Status()
		result = map[string]any{"error": map[string]any{"code": status, "message": err.Error(), "status": name}}
	}
	a.line(result)
}
