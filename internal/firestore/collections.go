package firestore

import (
	"context"
	"iter"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
)

// CollectionIDs lists the ids of the collections directly under parent (the
// database root or a document, which need not exist) that sort after
// pageToken ("": from the first), in order, at most pageSize of them (0:
// all); next is the last id listed when more follow. Only the owner may
// list collection ids: as in production, where the method needs an IAM
// permission that end-user credentials never carry whatever the rules say,
// anyone else gets PERMISSION_DENIED.
func (e *Engine) CollectionIDs(caller identity.Principal, parent string, pageSize int, pageToken string) (ids []string, next string, err error) {
	n, err := ParseName(parent)
	if err != nil {
		return nil, "", err
	}
	if !caller.Owner {
		return nil, "", errorf(errs.PermissionDenied, "Missing or insufficient permissions.")
	}
	if len(n.Path)%2 != 0 {
		return nil, "", errorf(errs.InvalidArgument, "Invalid parent %q.", parent)
	}
	prefix := strings.Join(n.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	e.mu.RLock()
	if ix := e.latestIndex(n.Database, time.Time{}); ix != nil {
		for id := range childIDs(ix, prefix, pageToken) {
			ids = append(ids, id)
			if pageSize > 0 && len(ids) > pageSize {
				break
			}
		}
	} else {
		ids = e.scanCollectionIDs(n.Database, prefix, pageToken)
	}
	e.mu.RUnlock()
	if pageSize > 0 && len(ids) > pageSize {
		ids = ids[:pageSize]
		next = ids[pageSize-1]
	}
	return ids, next, nil
}

// scanCollectionIDs lists, sorted, the ids after pageToken of the
// collections under the document at prefix ("" or a path ending in "/")
// from every document of database, as the reads of now see them; e.mu is
// held.
func (e *Engine) scanCollectionIDs(database, prefix, pageToken string) []string {
	seen := map[string]bool{}
	e.eachPathAt(database, e.readAt(time.Time{}), func(path string) {
		if strings.HasPrefix(path, prefix) {
			seen[strings.SplitN(path[len(prefix):], "/", 2)[0]] = true
		}
	})
	var ids []string
	for id := range seen {
		if id > pageToken {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// latestIndex returns the database's collection-order index when it is
// built and reads at t (zero: now) see the latest state, which it holds;
// else nil. e.mu is held.
func (e *Engine) latestIndex(database string, t time.Time) *fieldIndex {
	d := e.dbs[database]
	if d == nil || !e.latest(e.readAt(t)) {
		return nil
	}
	return e.builtIndex(d, byCollection)
}

// childIDs yields in order the first segments after prefix ("" or a path
// ending in "/") of the collection paths in ix that start with it, after
// the segment after: with a document path as prefix, the ids of its
// collections; with a collection's path, the ids of its documents that
// have collections. It seeks once per segment yielded.
func childIDs(ix *fieldIndex, prefix, after string) iter.Seq[string] {
	return func(yield func(string) bool) {
		from := prefix
		if after != "" {
			from = pastID(prefix, after)
		}
		for {
			var coll string
			ix.tree.AscendGreaterOrEqual(indexEntry{path: from, coll: int32(len(from)), seek: seekFirst}, func(en indexEntry) bool {
				coll = en.collection()
				return false
			})
			if coll == "" || !strings.HasPrefix(coll, prefix) || len(coll) == len(prefix) {
				return
			}
			id, _, _ := strings.Cut(coll[len(prefix):], "/")
			if !yield(id) {
				return
			}
			from = pastID(prefix, id)
		}
	}
}

// pastID returns a path that sorts after prefix+id and every path under it,
// and before prefix+id for the ids that sort after id.
func pastID(prefix, id string) string {
	if n, ok := numericID(id); ok {
		if n < math.MaxInt64 {
			return prefix + "__id" + strconv.FormatInt(n+1, 10) + "__"
		}
		return prefix + "\x00" // the first string id: numeric ids sort before them
	}
	return prefix + id + "\x00"
}

// ListDocuments lists a collection's documents by name after pageToken (a
// document name), as of c's read time (zero: the latest state; a
// transaction is refused, as loupe cannot list inside one). With
// showMissing, documents that do not exist but have subcollections are
// listed too, without fields or times.
func (e *Engine) ListDocuments(ctx context.Context, caller identity.Principal, parent, collection string, pageSize int, pageToken string, showMissing bool, c Consistency) ([]*pb.Document, string, error) {
	if c.Transaction != nil {
		return nil, "", errs.New(errs.InvalidArgument, "loupe lists documents at a read time, not in a transaction: query the collection in the transaction instead")
	}
	readTime := c.ReadTime
	n, err := ParseName(parent)
	if err != nil {
		return nil, "", err
	}
	coll := Name{Database: n.Database, Path: append(append([]string(nil), n.Path...), collection)}
	if err := e.check(ctx, caller, Access{Method: MethodList, Name: coll, Query: &pb.StructuredQuery{}}); err != nil {
		return nil, "", err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if !readTime.IsZero() {
		if err := e.checkReadTime(readTime); err != nil {
			return nil, "", err
		}
	}
	var docs []*pb.Document
	if ix := e.latestIndex(n.Database, readTime); ix != nil {
		docs = e.listFromIndex(ix, coll, pageSize, pageToken, showMissing)
	} else {
		docs = e.scanDocuments(coll, pageToken, showMissing, e.readAt(readTime), pageSize)
	}
	next := ""
	if pageSize > 0 && len(docs) > pageSize {
		docs = docs[:pageSize]
		next = docs[pageSize-1].GetName()
	}
	return docs, next, nil
}

// listFromIndex lists the documents of collection coll after the document
// named after, in name order, up to one more than pageSize (0: all), from
// the collection-order index: the collection's rows merged, with
// showMissing, with the ids of its documents that have collections; e.mu
// is held.
func (e *Engine) listFromIndex(ix *fieldIndex, coll Name, pageSize int, after string, showMissing bool) []*pb.Document {
	d := e.dbs[coll.Database]
	scope := strings.Join(coll.Path, "/")
	afterID := ""
	if a, err := ParseDocumentName(after); err == nil && strings.Join(a.Path[:len(a.Path)-1], "/") == scope {
		afterID = a.Path[len(a.Path)-1]
	} else if after != "" {
		return e.scanDocuments(coll, after, showMissing, time.Time{}, pageSize)
	}
	existing := func(yield func(string) bool) {
		start := rowOf(scope+"/", nil, nil)
		if afterID != "" {
			start = rowOf(scope+"/"+afterID, nil, nil)
		}
		ix.tree.AscendGreaterOrEqual(start, func(en indexEntry) bool {
			if en.collection() != scope {
				return false
			}
			id := en.path[len(scope)+1:]
			return id == afterID || yield(id)
		})
	}
	var parents iter.Seq[string] = func(func(string) bool) {}
	if showMissing {
		parents = childIDs(ix, scope+"/", afterID)
	}
	var docs []*pb.Document
	for id, exists := range mergeIDs(existing, parents) {
		name := coll.String() + "/" + id
		if exists {
			docs = append(docs, d.docs.get(scope+"/"+id))
		} else {
			docs = append(docs, &pb.Document{Name: name})
		}
		if pageSize > 0 && len(docs) > pageSize {
			break
		}
	}
	return docs
}

// mergeIDs merges two ordered sequences of document ids into one, each id
// once, yielding whether it came from the first.
func mergeIDs(first, second iter.Seq[string]) iter.Seq2[string, bool] {
	return func(yield func(string, bool) bool) {
		nextA, stopA := iter.Pull(first)
		defer stopA()
		nextB, stopB := iter.Pull(second)
		defer stopB()
		a, okA := nextA()
		b, okB := nextB()
		for okA || okB {
			switch c := compareReferences(a, b); {
			case okA && (!okB || c <= 0):
				if !yield(a, true) {
					return
				}
				if okB && c == 0 {
					b, okB = nextB()
				}
				a, okA = nextA()
			default:
				if !yield(b, false) {
					return
				}
				b, okB = nextB()
			}
		}
	}
}

// scanDocuments lists the documents of collection coll named after after,
// as of t, sorted by name, up to one more than pageSize (0: all), from the
// paths of every document of its database (with showMissing, missing
// documents with subcollections too); it decodes only those it lists.
// e.mu is held.
func (e *Engine) scanDocuments(coll Name, after string, showMissing bool, t time.Time, pageSize int) []*pb.Document {
	prefix := strings.Join(coll.Path, "/") + "/"
	exists := map[string]bool{} // by id; false: a missing document with subcollections
	e.eachPathAt(coll.Database, t, func(path string) {
		if !strings.HasPrefix(path, prefix) {
			return
		}
		id, _, deeper := strings.Cut(path[len(prefix):], "/")
		if !deeper {
			exists[id] = true
		} else if _, seen := exists[id]; showMissing && !seen {
			exists[id] = false
		}
	})
	names := make([]string, 0, len(exists))
	for id := range exists {
		if name := coll.String() + "/" + id; compareReferences(name, after) > 0 {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return compareReferences(names[i], names[j]) < 0 })
	if pageSize > 0 && len(names) > pageSize+1 {
		names = names[:pageSize+1]
	}
	docs := make([]*pb.Document, len(names))
	for i, name := range names {
		id := name[len(coll.String())+1:]
		if exists[id] {
			docs[i] = e.lookupAt(Name{Database: coll.Database, Path: append(slices.Clip(coll.Path), id)}, t)
		} else {
			docs[i] = &pb.Document{Name: name}
		}
	}
	return docs
}
