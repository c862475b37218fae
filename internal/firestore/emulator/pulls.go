package emulator

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
)

// maxCheckpoint bounds one pull's checkpoint (its position: a cursor per
// level of the collections it is walking).
const maxCheckpoint = 1 << 20

// pullID is what names a pull's checkpoint.
var pullID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// pullCheckpoints keeps where each unfinished `loupe data pull` into a
// database stopped: an opaque JSON state per database and pull id, which
// the pull saves with each batch it restores and reads back when it runs
// again, so that a pull that was killed continues instead of starting
// over. They live in the service's data dir (pulls/DATABASE/ID.json) or,
// in memory, as long as loupe runs.
type pullCheckpoints struct {
	mu  sync.Mutex
	dir string                                // "" in memory
	mem map[string]map[string]json.RawMessage // database → id → state
}

func newPullCheckpoints(dataDir string) *pullCheckpoints {
	p := &pullCheckpoints{mem: map[string]map[string]json.RawMessage{}}
	if dataDir != "" {
		p.dir = filepath.Join(dataDir, "pulls")
	}
	return p
}

func (p *pullCheckpoints) file(db, id string) string {
	return filepath.Join(p.dir, url.PathEscape(db), id+".json")
}

// get returns the state saved for the pull id into db, nil when none.
func (p *pullCheckpoints) get(db, id string) (json.RawMessage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dir == "" {
		return p.mem[db][id], nil
	}
	data, err := os.ReadFile(p.file(db, id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// put saves state (whole: a new file renamed over the old one, synced).
func (p *pullCheckpoints) put(db, id string, state json.RawMessage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dir == "" {
		if p.mem[db] == nil {
			p.mem[db] = map[string]json.RawMessage{}
		}
		p.mem[db][id] = state
		return nil
	}
	name := p.file(db, id)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), id+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(state)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// forget drops the state of the pull id into db, or with id "" of every
// pull into db (whose documents were cleared, so that none continues
// past documents that are gone).
func (p *pullCheckpoints) forget(db, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dir == "" {
		if id == "" {
			delete(p.mem, db)
		} else {
			delete(p.mem[db], id)
		}
		return nil
	}
	if id == "" {
		return os.RemoveAll(filepath.Join(p.dir, url.PathEscape(db)))
	}
	if err := os.Remove(p.file(db, id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// checkpoint is a restore request's optional checkpoint: the pull's id and
// the state to save once the request's documents are stored.
type checkpoint struct {
	Pull  string          `json:"pull"`
	State json.RawMessage `json:"state"`
}

func (c *checkpoint) check() error {
	if !pullID.MatchString(c.Pull) {
		return errs.New(errs.InvalidArgument, "checkpoint.pull must be 1 to 64 letters, digits, - or _.")
	}
	if len(c.State) == 0 || len(c.State) > maxCheckpoint {
		return errs.New(errs.InvalidArgument, "checkpoint.state must be a JSON value of at most 1 MiB.")
	}
	return nil
}

// pullState answers GET .../pulls/{pull}: the state the pull last saved,
// or 404 when it saved none (or finished).
func (s *Service) pullState(w http.ResponseWriter, r *http.Request) {
	db, id, ok := pullOf(w, r)
	if !ok {
		return
	}
	state, err := s.pulls.get(db, id)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	if state == nil {
		httpjson.Error(w, errs.New(errs.NotFound, "No checkpoint of pull "+id+"."))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(state)
}

// forgetPull answers DELETE .../pulls/{pull}: the pull finished.
func (s *Service) forgetPull(w http.ResponseWriter, r *http.Request) {
	db, id, ok := pullOf(w, r)
	if !ok {
		return
	}
	if err := s.pulls.forget(db, id); err != nil {
		httpjson.Error(w, err)
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{})
}

// pullOf is the database and pull id a request names; it answers 400 when
// the id is not one.
func pullOf(w http.ResponseWriter, r *http.Request) (db, id string, ok bool) {
	id = r.PathValue("pull")
	if !pullID.MatchString(id) {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "A pull id is 1 to 64 letters, digits, - or _."))
		return "", "", false
	}
	return "projects/" + r.PathValue("project") + "/databases/" + r.PathValue("database"), id, true
}
