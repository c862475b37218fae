package console

import (
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/loupe-dev/loupe/internal/httpjson"
)

// overviewResponse is GET /emulator/v1/overview.
type overviewResponse struct {
	ProjectID string          `json:"projectId"`
	URL       string          `json:"url"`
	Started   time.Time       `json:"started"`
	UptimeSec float64         `json:"uptimeSeconds"`
	DataDir   string          `json:"dataDir"`
	InMemory  bool            `json:"inMemory"`
	Services  []serviceStatus `json:"services"`
	Env       []EnvVar        `json:"env"`
	// Exports is Env as shell export lines, as --print-env prints them.
	Exports string `json:"exports"`
}

// The states of a service.
const (
	// Running: the service answers as configured.
	Running = "running"
	// Building: functions not built yet (they serve once built).
	Building = "building"
	// Degraded: it answers, but not as configured (a port it could not
	// bind, a rules file that does not exist).
	Degraded = "degraded"
	// Crashed: the functions' process ended by itself; it is restarted.
	Crashed = "crashed"
	// Failed: it cannot serve (a functions build that failed).
	Failed = "failed"
)

// State is a service's state, and what is wrong when it is not running.
type State struct {
	State  string `json:"state"`
	Detail string `json:"detail,omitempty"`
}

type serviceStatus struct {
	Name string `json:"name"`
	// Address is host:port where the service answers (its own port when it
	// has one, else the main port).
	Address string `json:"address"`
	// Bytes is the size of its data on disk (0 in memory).
	Bytes int64 `json:"bytes"`
	// Documents counts Firestore's documents (firestore only).
	Documents *int `json:"documents,omitempty"`
	State
}

// EnvVar is one variable to export.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func (s *Service) overview(w http.ResponseWriter, _ *http.Request) {
	base, _ := url.Parse(s.opts.URL())
	host := base.Hostname()
	res := overviewResponse{
		ProjectID: s.opts.ProjectID,
		URL:       base.String(),
		Started:   s.opts.Started.UTC(),
		UptimeSec: time.Since(s.opts.Started).Seconds(),
		DataDir:   s.opts.DataDir,
		InMemory:  s.opts.DataDir == "",
		Services:  []serviceStatus{},
		Env:       s.opts.Env(),
	}
	if s.opts.Exports != nil {
		res.Exports = s.opts.Exports()
	}
	for _, name := range s.opts.Services {
		addr := net.JoinHostPort(host, strconv.Itoa(s.opts.Port(name)))
		st := serviceStatus{Name: name, Address: addr, State: State{State: Running}}
		if s.opts.State != nil {
			st.State = s.opts.State(name)
		}
		if s.opts.DataDir != "" {
			st.Bytes = dirSize(filepath.Join(s.opts.DataDir, name))
		}
		if name == "firestore" && s.opts.Firestore != nil {
			n := 0
			for _, db := range s.opts.Firestore.Databases() {
				n += db.Documents
			}
			st.Documents = &n
		}
		res.Services = append(res.Services, st)
	}
	httpjson.Write(w, http.StatusOK, res)
}

// dirSize is the total size of the regular files under dir (0 when absent).
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
