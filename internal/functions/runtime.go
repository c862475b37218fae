package functions

import (
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"strings"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/triggers"
)

// Runtime is one language's way to run a codebase: it builds and discovers
// its functions (never by parsing its source: each runtime asks the
// functions' own SDK or manifest), starts its worker process and delivers to
// it. Each runtime is one file: golang.go, node.go, runtime_python.go.
type Runtime interface {
	// Name is the runtime's name as firebase.json's "runtime" begins
	// ("go", "nodejs", "python").
	Name() string
	// Detect reports whether the folder holds a codebase of this runtime.
	Detect(dir string) bool
	// Build prepares the codebase for running (compiles it when it needs
	// it) and discovers its functions. Its error holds what the user must
	// read to fix it: compiler output, or the file and stack of a module
	// that failed to load.
	Build(ctx context.Context, cb *codebase) (Build, error)
	// Watched reports whether a change to the file at rel (slash-separated,
	// relative to the codebase) rebuilds it, and for a folder whether to
	// look inside it.
	Watched(rel string, dir bool) bool
}

// Build is one successful build of a codebase.
type Build interface {
	// Functions are the functions discovered.
	Functions() []Function
	// Command is the worker process serving every function of the build on
	// port; the caller adds the environment and starts it. done is called
	// once it has started.
	Command(ctx context.Context, port int) (cmd *exec.Cmd, done func(), err error)
	// Deliverer is how events reach function f of a worker at base.
	Deliverer(base *url.URL, f Function) triggers.Deliverer
	// HTTPPath is the path prefix under base where the worker serves the
	// HTTP function f (onRequest, onCall, blocking, task queue, schedule).
	HTTPPath(f Function) string
	// Close releases what the build holds (the Go binary).
	Close()
}

// runtimes is the runtime table, in the order a folder is tried.
var runtimes = []Runtime{goRuntime{}, nodeRuntime{}, pythonRuntime{}}

// runtimeFor picks the runtime of a codebase: the one firebase.json names,
// else the first that recognises the folder.
func runtimeFor(cb config.Codebase, dir string) (Runtime, error) {
	for _, r := range runtimes {
		if cb.Runtime != "" && strings.HasPrefix(cb.Runtime, r.Name()) {
			return r, nil
		}
	}
	if cb.Runtime != "" {
		return nil, fmt.Errorf("functions codebase %s: runtime %q is not one loupe runs (go, nodejs, python)", cb.Name(), cb.Runtime)
	}
	for _, r := range runtimes {
		if r.Detect(dir) {
			return r, nil
		}
	}
	return nil, fmt.Errorf("functions codebase %s: %s has no go.mod, package.json or main.py", cb.Name(), dir)
}

// Kinds of function: how loupe reaches it.
const (
	// KindEvent functions get events of the trigger table.
	KindEvent = "event"
	// KindHTTPS functions (onRequest) answer HTTP requests.
	KindHTTPS = "https"
	// KindCallable functions (onCall) answer the callable protocol.
	KindCallable = "callable"
	// KindBlocking functions are Auth's blocking functions.
	KindBlocking = "blocking"
	// KindSchedule functions run on a schedule, or on demand.
	KindSchedule = "schedule"
	// KindTask functions take the tasks of their queue.
	KindTask = "task"
)

// Function is one discovered function, whatever its runtime.
type Function struct {
	// Name is its id (a Node.js export "users-onCreate" for users.onCreate).
	Name     string `json:"name"`
	Codebase string `json:"codebase"`
	Runtime  string `json:"runtime"`
	Kind     string `json:"kind"`
	// Platform is gcfv1 or gcfv2 for Firebase SDK functions, run for Go.
	Platform string   `json:"platform,omitempty"`
	Regions  []string `json:"regions"`
	// Trigger is its event trigger (KindEvent), without a deliverer.
	Trigger *triggers.Trigger `json:"trigger,omitempty"`
	// EntryPoint is what the runtime loads: the export path of a Node.js
	// function, the HTTP path of a Go one.
	EntryPoint string `json:"entryPoint"`
	// BlockingEvent is beforeCreate, beforeSignIn, … (KindBlocking).
	BlockingEvent string `json:"blockingEvent,omitempty"`
	// Schedule and TimeZone are a scheduled function's cron (KindSchedule).
	Schedule string `json:"schedule,omitempty"`
	TimeZone string `json:"timeZone,omitempty"`
	// Policy is a task queue's retry and rate settings (KindTask) or a
	// schedule's retries.
	Policy triggers.Policy `json:"policy"`
	// Options are the rest of the manifest entry as the SDK wrote it
	// (memory, minInstances, secrets, labels, …), for the console.
	Options map[string]any `json:"options,omitempty"`
}

// region is the function's first region, us-central1 by default.
func (f Function) region() string {
	if len(f.Regions) > 0 {
		return f.Regions[0]
	}
	return triggers.Location
}
