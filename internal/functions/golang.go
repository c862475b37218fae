package functions

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loupe-dev/loupe/internal/triggers"
)

// goRuntime runs a Go module as Cloud Run runs functions-framework-go:
// go build ./cmd/functions, one process serving every function on $PORT.
// Its triggers are declared in triggers.json (the Eventarc filters of its
// deployment), the one discovery Go functions have; each is delivered as a
// binary-mode CloudEvent to its path. Hosting rewrites to any function or
// Cloud Run service name reach the process.
type goRuntime struct{}

func (goRuntime) Name() string { return "go" }

func (goRuntime) Detect(dir string) bool { return fileExists(filepath.Join(dir, "go.mod")) }

// Watched: the files go build reads (the module's .go files other than
// tests, go.mod, go.sum) and triggers.json; like go build, it skips testdata
// and folders whose names start with "." or "_".
func (goRuntime) Watched(rel string, dir bool) bool {
	name := path.Base(rel)
	if dir {
		return name != "testdata" && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_")
	}
	return name == "go.mod" || name == "go.sum" || name == "triggers.json" ||
		(strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go"))
}

// goTrigger is one entry of triggers.json: a Firestore trigger (eventType,
// document, database) or an Eventarc one (eventType, channel, filters; a
// Firebase Alerts trigger names no channel), delivered to path.
type goTrigger struct {
	Name      string            `json:"name"`
	EventType string            `json:"eventType"`
	Document  string            `json:"document"`
	Database  string            `json:"database"`
	Channel   string            `json:"channel"`
	Filters   map[string]string `json:"filters"`
	Path      string            `json:"path"`
}

// trigger is the trigger table's entry of t: a custom event's when it names
// a channel or its type is none of the table's sources', else the source's.
func (t goTrigger) trigger() (*triggers.Trigger, error) {
	src, known := triggers.SourceOf(t.EventType)
	if t.Channel != "" || !known {
		tr, err := eventarcTrigger(t.Name, t.EventType, t.Channel, triggers.Location, t.Filters)
		if err != nil {
			return nil, err
		}
		tr.Retry = true
		return tr, nil
	}
	return &triggers.Trigger{Name: t.Name, Source: src, EventType: t.EventType, Instance: cmp.Or(t.Database, "(default)"),
		Pattern: t.Document, Retry: true}, nil
}

// Build reads triggers.json and runs go build on the module, under ctx (its
// end interrupts go build and the tools it runs). A failed build's error
// holds the compiler's output.
func (goRuntime) Build(ctx context.Context, cb *codebase) (Build, error) {
	var file struct {
		Triggers []goTrigger `json:"triggers"`
	}
	data, err := os.ReadFile(filepath.Join(cb.source, "triggers.json"))
	if err == nil {
		err = json.Unmarshal(data, &file)
	}
	b := &goBuild{codebase: cb.name}
	var ts []triggers.Trigger
	for _, t := range file.Triggers {
		tr, terr := t.trigger()
		if terr != nil {
			err = terr
			break
		}
		ts = append(ts, *tr)
		b.fns = append(b.fns, Function{Name: t.Name, Codebase: cb.name, Runtime: "go", Kind: KindEvent, Platform: "run",
			Regions: []string{triggers.Location}, Trigger: tr, EntryPoint: t.Path})
	}
	if err == nil {
		err = triggers.Check(ts)
	}
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("triggers.json in %s: %v", cb.source, err)
	}
	dir, err := os.MkdirTemp("", "loupe-functions-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "functions")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/functions")
	cmd.Dir = cb.source
	dieWithParent(cmd)
	interruptGroup(cmd)
	cmd.WaitDelay = stopGrace
	if output, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build in %s failed (%v):\n%s", cb.source, err, strings.TrimSpace(string(output)))
	}
	if b.bin, err = os.Open(out); err != nil {
		return nil, err
	}
	return b, nil
}

// goBuild is one successful build of a Go module: its binary, held open
// with no name on disk (so nothing is left behind however loupe ends), and
// the triggers.json read with it.
type goBuild struct {
	bin      *os.File
	codebase string
	fns      []Function
}

func (b *goBuild) Functions() []Function { return b.fns }

// Command copies the binary into a new temporary folder for one process to
// run; done deletes the folder once the process has started.
func (b *goBuild) Command(ctx context.Context, port int) (*exec.Cmd, func(), error) {
	dir, err := os.MkdirTemp("", "loupe-functions-")
	if err != nil {
		return nil, nil, err
	}
	remove := func() { os.RemoveAll(dir) }
	exe := filepath.Join(dir, "functions")
	f, err := os.OpenFile(exe, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o700)
	if err == nil {
		_, err = io.Copy(f, io.NewSectionReader(b.bin, 0, 1<<62))
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		remove()
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = []string{fmt.Sprintf("PORT=%d", port), "HOST=127.0.0.1"}
	return cmd, remove, nil
}

// Deliverer posts CloudEvents to the function's path.
func (b *goBuild) Deliverer(base *url.URL, f Function) triggers.Deliverer {
	return cloudEventPost{url: base.String() + f.EntryPoint}
}

// servingPrefix begins the line functions-framework-go writes for each
// function it serves as it starts: Serving function: "name" (its path is
// "/name").
const servingPrefix = "Serving function: "

// Announced implements announcer: a served function whose path is no
// trigger's is an HTTP function, served at its own path.
func (b *goBuild) Announced(line string) (Function, bool) {
	quoted, ok := strings.CutPrefix(line, servingPrefix)
	if !ok {
		return Function{}, false
	}
	name, err := strconv.Unquote(quoted)
	if err != nil || name == "" {
		return Function{}, false
	}
	for _, f := range b.fns {
		if f.EntryPoint == "/"+name {
			return Function{}, false
		}
	}
	return Function{Name: name, Codebase: b.codebase, Runtime: "go", Kind: KindHTTPS, Platform: "run",
		Regions: []string{triggers.Location}, EntryPoint: "/" + name}, true
}

// HTTPPath: the Go process serves its routes from its root.
func (b *goBuild) HTTPPath(Function) string { return "" }

func (b *goBuild) Close() { b.bin.Close() }

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// cloudEventPost delivers events to a function that takes CloudEvents over
// HTTP in binary mode (ce-* headers, the data as body), as Eventarc
// delivers them to Cloud Run: the body is the event's JSON data, or the text
// of a custom event whose datacontenttype (its Content-Type) is not JSON.
type cloudEventPost struct{ url string }

// Deliver implements triggers.Deliverer.
func (p cloudEventPost) Deliver(ctx context.Context, t triggers.Trigger, e triggers.Event) (int, error) {
	attrs := triggers.CloudEvent(e, t.EventType)
	body, contentType := e.Data, "application/json"
	if ct, ok := attrs["datacontenttype"]; ok {
		delete(attrs, "datacontenttype")
		contentType = ct
		var text string
		if !isJSONContent(ct) && json.Unmarshal(e.Data, &text) == nil {
			body = []byte(text)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range attrs {
		req.Header.Set("ce-"+k, v)
	}
	resp, err := deliveryClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
