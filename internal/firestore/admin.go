package firestore

import (
	"context"
	"sort"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
)

// DatabaseStats is one database the engine holds, as the console lists it.
type DatabaseStats struct {
	// Name is projects/{p}/databases/{d}.
	Name string `json:"name"`
	// Documents is how many documents it holds.
	Documents int `json:"documents"`
}

// Databases lists the databases that hold or held documents, by name.
func (e *Engine) Databases() []DatabaseStats {
	e.mu.RLock()
	out := make([]DatabaseStats, 0, len(e.dbs))
	for name, d := range e.dbs {
		out = append(out, DatabaseStats{Name: name, Documents: len(d.docs)})
	}
	e.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// DeleteTree deletes, as the owner, the documents at and under name (a
// collection or a document with its subcollections) in commits of at most
// MaxWritesPerCommit, so listeners and triggers see ordinary deletes. It
// returns how many documents it deleted.
func (e *Engine) DeleteTree(ctx context.Context, name string) (int, error) {
	return e.DeleteTreeWithProgress(ctx, name, nil)
}

// DeleteTreeWithProgress is DeleteTree, telling progress (when not nil) how
// many documents there are to delete before the first commit, then how many
// are deleted after each.
func (e *Engine) DeleteTreeWithProgress(ctx context.Context, name string, progress Progress) (int, error) {
	n, err := ParseName(name)
	if err != nil {
		return 0, err
	}
	if len(n.Path) == 0 {
		return 0, errorf(errs.InvalidArgument, "Name %q is a database, not a collection or document.", name)
	}
	prefix := strings.Join(n.Path, "/")
	e.mu.RLock()
	var paths []string
	if d := e.dbs[n.Database]; d != nil {
		for p := range d.docs {
			if p == prefix || strings.HasPrefix(p, prefix+"/") {
				paths = append(paths, p)
			}
		}
	}
	e.mu.RUnlock()
	sort.Strings(paths)
	if progress == nil {
		progress = func(int, int) {}
	}
	progress(0, len(paths))
	owner := identity.Owner
	for start := 0; start < len(paths); start += MaxWritesPerCommit {
		batch := paths[start:min(start+MaxWritesPerCommit, len(paths))]
		writes := make([]*pb.Write, len(batch))
		for i, p := range batch {
			writes[i] = &pb.Write{Operation: &pb.Write_Delete{Delete: n.Database + "/documents/" + p}}
		}
		if _, err := e.Commit(ctx, owner, n.Database, writes, nil); err != nil {
			return start, err
		}
		progress(start+len(batch), len(paths))
	}
	return len(paths), nil
}
