package firestore

import (
	"context"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/identity"
)

// Methods an Access names, as security rules name them.
const (
	MethodGet    = "get"
	MethodList   = "list"
	MethodCreate = "create"
	MethodUpdate = "update"
	MethodDelete = "delete"
)

// Access is one request to judge: who asks to do what to which document.
type Access struct {
	Caller identity.Principal
	Method string
	// Name is the document (get, create, update, delete) or the collection queried (list).
	Name Name
	// Existing is the stored document, nil when there is none.
	Existing *pb.Document
	// Incoming is the document as the write would leave it (create, update).
	Incoming *pb.Document
	// Query is the structured query of a list.
	Query *pb.StructuredQuery
	// Before reads a document as stored before the request (get); After reads
	// it as the whole commit would leave it (getAfter). Authorizers must read
	// through these, never the engine: during a commit the engine is locked.
	Before func(name string) *pb.Document
	After  func(name string) *pb.Document
	// Batch is true when the write is one of several in a commit.
	Batch bool
	// Time is the request time: the commit time for writes (what server
	// timestamps in Incoming hold), the read time otherwise.
	Time time.Time
}

// Authorizer judges accesses by callers other than the owner. It returns an
// *errs.Error of kind PermissionDenied to refuse.
type Authorizer interface {
	Authorize(ctx context.Context, a Access) error
}

// SetAuthorizer replaces the authorizer (nil allows everything); open
// listen targets are judged again by it.
func (e *Engine) SetAuthorizer(a Authorizer) {
	e.mu.Lock()
	e.authorize = a
	e.mu.Unlock()
	e.RecheckListeners()
}

func (e *Engine) check(ctx context.Context, caller identity.Principal, a Access) error {
	if caller.Owner {
		return nil
	}
	e.mu.RLock()
	auth := e.authorize
	e.mu.RUnlock()
	if auth == nil {
		return nil
	}
	a.Caller = caller
	if a.Time.IsZero() {
		a.Time = time.Now().UTC()
	}
	a.Before = func(name string) *pb.Document {
		n, err := ParseDocumentName(name)
		if err != nil {
			return nil
		}
		e.mu.RLock()
		defer e.mu.RUnlock()
		return e.lookupAt(n, e.readAt(time.Time{}))
	}
	return auth.Authorize(ctx, a)
}
