package firestore

import (
	"context"
	"sort"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/identity"
)

// CollectionIDs lists the ids of the collections directly under parent (the
// database root or a document, which need not exist), sorted.
func (e *Engine) CollectionIDs(parent string) ([]string, error) {
	n, err := ParseName(parent)
	if err != nil {
		return nil, err
	}
	if len(n.Path)%2 != 0 {
		return nil, errorf(InvalidArgument, "Invalid parent %q.", parent)
	}
	prefix := strings.Join(n.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	ids := map[string]bool{}
	e.eachPathAt(n.Database, e.readAt(time.Time{}), func(path string) {
		if strings.HasPrefix(path, prefix) {
			ids[strings.SplitN(path[len(prefix):], "/", 2)[0]] = true
		}
	})
	out := make([]string, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}

// ListDocuments lists a collection's documents by name after pageToken (a
// document name), as of readTime (zero: the latest state). With
// showMissing, documents that do not exist but have subcollections are
// listed too, without fields or times.
func (e *Engine) ListDocuments(ctx context.Context, caller identity.Principal, parent, collection string, pageSize int, pageToken string, showMissing bool, readTime time.Time) ([]*pb.Document, string, error) {
	n, err := ParseName(parent)
	if err != nil {
		return nil, "", err
	}
	coll := Name{Database: n.Database, Path: append(append([]string(nil), n.Path...), collection)}
	if err := e.check(ctx, caller, Access{Method: MethodList, Name: coll, Query: &pb.StructuredQuery{}}); err != nil {
		return nil, "", err
	}
	prefix := strings.Join(coll.Path, "/") + "/"
	e.mu.RLock()
	if !readTime.IsZero() {
		if err := e.checkReadTime(readTime); err != nil {
			e.mu.RUnlock()
			return nil, "", err
		}
	}
	readTime = e.readAt(readTime)
	byName := map[string]*pb.Document{}
	e.eachDocAt(n.Database, readTime, func(path string, doc *pb.Document) {
		if !strings.HasPrefix(path, prefix) {
			return
		}
		rest := strings.Split(path[len(prefix):], "/")
		if len(rest) == 1 {
			byName[doc.Name] = doc // a real document wins over a missing placeholder
		} else if name := coll.String() + "/" + rest[0]; showMissing && byName[name] == nil {
			byName[name] = &pb.Document{Name: name}
		}
	})
	e.mu.RUnlock()
	names := make([]string, 0, len(byName))
	for name := range byName {
		if compareReferences(name, pageToken) > 0 {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return compareReferences(names[i], names[j]) < 0 })
	next := ""
	if pageSize > 0 && len(names) > pageSize {
		names = names[:pageSize]
		next = names[pageSize-1]
	}
	docs := make([]*pb.Document, len(names))
	for i, name := range names {
		docs[i] = byName[name]
	}
	return docs, next, nil
}
