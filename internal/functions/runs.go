package functions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/triggers"
)

// maxRuns bounds the runs kept in memory for the console.
const maxRuns = 1000

// executionHeader carries a run's id to the worker, as Cloud Functions
// sends it; functions-framework-go's LogWriter and loupe's Node.js worker
// label the run's structured log lines with it (execution_id).
const executionHeader = "Function-Execution-Id"

// Run is one invocation of a function: one trigger delivery attempt (an
// event, a schedule's run, a task), one HTTP or callable request, or one
// blocking function's call.
type Run struct {
	// ID is the execution id the worker got in Function-Execution-Id.
	ID       string    `json:"id"`
	Codebase string    `json:"codebase"`
	Function string    `json:"function"`
	Started  time.Time `json:"started"`
	// Running is true until the function answers or fails to.
	Running bool `json:"running"`
	// Status is the HTTP status the function answered with (0: none).
	Status   int           `json:"status"`
	Error    string        `json:"error,omitempty"`
	Failed   bool          `json:"failed"`
	Duration time.Duration `json:"durationNs"`
}

// runStats is what the functions list shows of one function's runs.
type runStats struct {
	Calls  int  `json:"calls"`
	Errors int  `json:"errors"`
	Last   *Run `json:"lastRun,omitempty"`
}

// runLog records every invocation of every function, whatever reached it,
// counts each function's calls and errors, and keeps the newest maxRuns
// runs. A run fails when no answer came or the function answered with a
// status of 500 or more (a trigger's function threw; an HTTP function's
// own 4xx answers are answers).
type runLog struct {
	// log, when set, gets a line at each run's start and end, as
	// firebase-tools logs "Beginning execution of" and "Finished".
	log   *processLog
	mu    sync.Mutex
	runs  []*Run
	stats map[string]*runStats // by codebase/function
	// active are the runs under way, by codebase.
	active map[string][]*Run
}

func newRunLog() *runLog {
	return &runLog{stats: map[string]*runStats{}, active: map[string][]*Run{}}
}

// begin records the start of a run of codebase's function.
func (l *runLog) begin(codebase, function string) *Run {
	var id [8]byte
	_, _ = rand.Read(id[:])
	r := &Run{ID: hex.EncodeToString(id[:]), Codebase: codebase, Function: function, Started: time.Now().UTC(), Running: true}
	l.mu.Lock()
	l.runs = append(l.runs, r)
	if over := len(l.runs) - maxRuns; over > 0 {
		l.runs = append([]*Run(nil), l.runs[over:]...)
	}
	l.active[codebase] = append(l.active[codebase], r)
	st := l.stat(codebase, function)
	st.Calls++
	st.Last = r
	l.mu.Unlock()
	l.note(r, "INFO", fmt.Sprintf("Beginning execution of %q", function))
	return r
}

// note records a line of loupe's about run r.
func (l *runLog) note(r *Run, severity, text string) {
	if l.log != nil {
		l.log.add(LogLine{Stream: "loupe", Codebase: r.Codebase, Function: r.Function, Run: r.ID, Severity: severity, Text: text})
	}
}

// end records how run r ended: the status the function answered with, or
// err when no answer came.
func (l *runLog) end(r *Run, status int, err error) {
	l.mu.Lock()
	r.Running, r.Status, r.Duration = false, status, time.Since(r.Started)
	r.Failed = err != nil || status == 0 || status >= 500
	if err != nil {
		r.Error = err.Error()
	}
	if r.Failed {
		l.stat(r.Codebase, r.Function).Errors++
	}
	l.active[r.Codebase] = slices.DeleteFunc(l.active[r.Codebase], func(a *Run) bool { return a == r })
	done := *r
	l.mu.Unlock()
	text := fmt.Sprintf("Finished %q in %s with status %d", done.Function, done.Duration.Round(time.Microsecond), done.Status)
	switch {
	case err != nil:
		l.note(&done, "ERROR", fmt.Sprintf("%q got no answer after %s: %v", done.Function, done.Duration.Round(time.Microsecond), err))
	case done.Failed:
		l.note(&done, "ERROR", text)
	default:
		l.note(&done, "INFO", text)
	}
}

func (l *runLog) stat(codebase, function string) *runStats {
	st := l.stats[codebase+"/"+function]
	if st == nil {
		st = &runStats{}
		l.stats[codebase+"/"+function] = st
	}
	return st
}

// summary returns a copy of the function's counts and last run.
func (l *runLog) summary(codebase, function string) runStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, ok := l.stats[codebase+"/"+function]
	if !ok {
		return runStats{}
	}
	out := *st
	if st.Last != nil {
		last := *st.Last
		out.Last = &last
	}
	return out
}

// list returns copies of the kept runs, oldest first, that keep accepts.
func (l *runLog) list(keep func(Run) bool) []Run {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []Run{}
	for _, r := range l.runs {
		if keep(*r) {
			out = append(out, *r)
		}
	}
	return out
}

// sole returns the run under way in codebase when it is the only one: a
// worker's plain (unlabelled) output line is then that run's.
func (l *runLog) sole(codebase string) (Run, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.active[codebase]; len(a) == 1 {
		return *a[0], true
	}
	return Run{}, false
}

// byID returns the run with the execution id, while it is kept.
func (l *runLog) byID(id string) (Run, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.runs) - 1; i >= 0; i-- {
		if l.runs[i].ID == id {
			return *l.runs[i], true
		}
	}
	return Run{}, false
}

// runKey carries a run's id in a delivery's context, for executionTransport.
type runKey struct{}

// withRun returns ctx carrying run r's id.
func withRun(ctx context.Context, r *Run) context.Context {
	return context.WithValue(ctx, runKey{}, r.ID)
}

// executionTransport sends the id of the run in a request's context as
// Function-Execution-Id.
type executionTransport struct{ base http.RoundTripper }

func (t executionTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if id, ok := req.Context().Value(runKey{}).(string); ok {
		req = req.Clone(req.Context())
		req.Header.Set(executionHeader, id)
	}
	return t.base.RoundTrip(req)
}

// recordedDeliverer records each delivery attempt to a function as a run.
type recordedDeliverer struct {
	runs               *runLog
	codebase, function string
	next               triggers.Deliverer
}

// Deliver implements triggers.Deliverer.
func (d recordedDeliverer) Deliver(ctx context.Context, t triggers.Trigger, e triggers.Event) (int, error) {
	r := d.runs.begin(d.codebase, d.function)
	status, err := d.next.Deliver(withRun(ctx, r), t, e)
	d.runs.end(r, status, err)
	return status, err
}
