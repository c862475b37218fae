package functions

import (
	"fmt"
	"strings"

	"github.com/loupe-dev/loupe/internal/triggers"
)

// reportInitialized logs each function of build b once it serves, as firebase-tools
// logs them: "functions[us-central1-hello]: http function initialized
// (http://…)." for one reached over HTTP, "… firestore function
// initialized." for a trigger. A restart of the same build says nothing.
func (c *codebase) reportInitialized(b Build) {
	c.mu.Lock()
	seen := c.reported == b
	c.reported = b
	c.mu.Unlock()
	if seen {
		return
	}
	base := c.svc.loupeURL
	if c.svc.PublicURL != nil {
		base = c.svc.PublicURL
	}
	for _, f := range b.Functions() {
		msg := fmt.Sprintf("functions[%s-%s]: %s function initialized", f.region(), f.Name, triggerType(f))
		if f.Kind != KindEvent && f.Kind != KindSchedule {
			msg += fmt.Sprintf(" (%s/%s/%s/%s)", base(), c.svc.env.ProjectID, f.region(), f.Name)
		}
		c.logger.Info(msg + ".")
	}
}

// triggerType names what calls f, as firebase-tools names it: http for a
// function reached over HTTP (onRequest, onCall, task queues), else the
// service its events come from.
func triggerType(f Function) string {
	switch f.Kind {
	case KindEvent:
		return string(f.Trigger.Source)
	case KindBlocking:
		return string(triggers.Auth)
	case KindSchedule:
		return string(triggers.PubSub)
	}
	return "http"
}

// Failure is a codebase that does not run: its build or its module's load
// failed, or its worker did not start.
type Failure struct {
	Codebase string
	Source   string
	// Detail is what went wrong, as the build or the worker said it.
	Detail string
}

// Failures lists the codebases that do not run now (after Settled, the
// ones that failed to load).
func (s *Service) Failures() []Failure {
	var out []Failure
	for _, c := range s.codebases {
		c.mu.Lock()
		st := c.st
		c.mu.Unlock()
		if st.State == "failed" || st.State == "exited" {
			out = append(out, Failure{Codebase: c.name, Source: c.source, Detail: strings.TrimSpace(st.Detail)})
		}
	}
	return out
}
