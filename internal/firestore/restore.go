package firestore

import (
	"context"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"google.golang.org/protobuf/proto"
)

// Restore puts docs into database as they are, as the owner: each keeps
// the createTime and updateTime it carries (a document pulled from another
// Firestore keeps the times that one gave it), which no write through the
// API can set. A document equal to the one stored (fields and times) is
// left alone, so restoring the same documents again changes nothing. Every
// document is checked first (its name in database, both times, its fields
// and size as a write's are) and a bad one fails the call before anything
// changes; the rest go in commits of at most MaxWritesPerCommit, logged and
// published like any other (listeners and triggers see them as writes at
// the commit's time, while the documents show their own). It returns how
// many documents it changed.
func (e *Engine) Restore(ctx context.Context, database string, docs []*pb.Document) (int, error) {
	if _, err := ParseDatabase(database); err != nil {
		return 0, err
	}
	bson := e.Edition(database) == EditionEnterprise
	for _, doc := range docs {
		n, err := ParseDocumentName(doc.GetName())
		if err != nil {
			return 0, err
		}
		if n.Database != database {
			return 0, errorf(errs.InvalidArgument, "Document %s is not in database %s.", doc.Name, database)
		}
		if doc.CreateTime.CheckValid() != nil || doc.UpdateTime.CheckValid() != nil {
			return 0, errorf(errs.InvalidArgument, "Document %s needs a valid createTime and updateTime.", doc.Name)
		}
		if doc.UpdateTime.AsTime().Before(doc.CreateTime.AsTime()) {
			return 0, errorf(errs.InvalidArgument, "Document %s was updated before it was created.", doc.Name)
		}
		if err := validateFields(doc.Fields, doc.Name, bson); err != nil {
			return 0, err
		}
		if err := checkLimits(doc); err != nil {
			return 0, err
		}
	}
	changed := 0
	for start := 0; start < len(docs); start += MaxWritesPerCommit {
		n, err := e.restore(ctx, docs[start:min(start+MaxWritesPerCommit, len(docs))])
		changed += n
		if err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// restore commits one batch of checked documents.
func (e *Engine) restore(ctx context.Context, docs []*pb.Document) (int, error) {
	writes := make([]*pb.Write, len(docs))
	for i, doc := range docs {
		writes[i] = &pb.Write{Operation: &pb.Write_Update{Update: doc}}
	}
	owner, err := e.lockWrites(ctx, writes, nil)
	if err != nil {
		return 0, err
	}
	if owner != nil {
		defer e.locks.release(owner)
	}
	e.mu.Lock()
	var c Commit
	for _, doc := range docs {
		n, _ := ParseDocumentName(doc.Name)
		d := e.db(n.Database)
		path := strings.Join(n.Path, "/")
		old := d.docs.get(path)
		if old != nil && proto.Equal(old, doc) {
			continue
		}
		doc = proto.Clone(doc).(*pb.Document)
		oldEncoded := d.docs[path].encoded
		encoded := d.docs.set(path, doc)
		d.reindex(path, old, doc)
		c.Changes = append(c.Changes, Change{Database: d.name, Path: path, Old: old, New: doc, encoded: encoded, oldEncoded: oldEncoded})
	}
	if len(c.Changes) == 0 {
		e.mu.Unlock()
		return 0, nil
	}
	c.Time = e.nextTime()
	done := e.enqueue(c, nil)
	e.mu.Unlock()
	if err := <-done; err != nil {
		return 0, durabilityError(err)
	}
	return len(c.Changes), nil
}
