package functions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/triggers"
)

// trigger is one entry of triggers.json.
type trigger struct {
	Name      string `json:"name"`
	EventType string `json:"eventType"`
	Document  string `json:"document"`
	Path      string `json:"path"`
}

// build is one successful build of the functions module: its binary, held
// open with no name on disk (so nothing is left behind however loupe ends),
// and the triggers.json read with it.
type build struct {
	bin      *os.File
	triggers []trigger
}

// compile reads triggers.json and runs go build on the module, under ctx
// (its end interrupts go build and the tools it runs). A failed build's
// error holds the compiler's output.
func (s *Service) compile(ctx context.Context) (*build, error) {
	s.mu.Lock()
	s.st.Build = buildInfo{State: "building", At: time.Now().UTC()}
	s.mu.Unlock()
	var file struct {
		Triggers []trigger `json:"triggers"`
	}
	data, err := os.ReadFile(filepath.Join(s.source, "triggers.json"))
	if err == nil {
		err = json.Unmarshal(data, &file)
	}
	if err == nil {
		err = triggers.Check((&build{triggers: file.Triggers}).triggerList(""))
	}
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("triggers.json in %s: %v", s.source, err)
	}
	dir, err := os.MkdirTemp("", "loupe-functions-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "functions")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/functions")
	cmd.Dir = s.source
	dieWithParent(cmd)
	interruptGroup(cmd)
	cmd.WaitDelay = stopGrace
	if output, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build in %s failed (%v):\n%s", s.source, err, strings.TrimSpace(string(output)))
	}
	bin, err := os.Open(out)
	if err != nil {
		return nil, err
	}
	return &build{bin: bin, triggers: file.Triggers}, nil
}

// executable copies the binary into a new temporary folder for one process
// to run; remove deletes the folder once the process has started.
func (b *build) executable() (path string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "loupe-functions-")
	if err != nil {
		return "", nil, err
	}
	remove = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, "functions")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o700)
	if err == nil {
		_, err = io.Copy(f, io.NewSectionReader(b.bin, 0, 1<<62))
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		remove()
		return "", nil, err
	}
	return path, remove, nil
}

// triggerList gives the build's triggers.json entries the URLs of a process
// at base.
func (b *build) triggerList(base string) []triggers.Trigger {
	var ts []triggers.Trigger
	for _, t := range b.triggers {
		ts = append(ts, triggers.Trigger{Name: t.Name, EventType: t.EventType, Document: t.Document, URL: base + t.Path})
	}
	return ts
}

func (b *build) close() {
	if b != nil {
		b.bin.Close()
	}
}
