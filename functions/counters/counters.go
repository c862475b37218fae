// Package counters keeps comments' repliesCount: a reply created raises its
// parent's count by one; a reply soft-deleted (deleted false → true) lowers it
// by one, never below zero. Each event is applied once: a ledger document
// (_functionEvents/{eventId}) is created in the same transaction, so a
// redelivered event changes nothing.
package counters

import (
	"context"
	"path"

	"cloud.google.com/go/firestore"
	cloudevent "github.com/cloudevents/sdk-go/v2/event"
	"github.com/loupe-dev/loupe/functions/internal/event"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Ledger is the collection of handled event ids.
const Ledger = "_functionEvents"

// Handler handles comment events.
type Handler struct{ DB *firestore.Client }

// delta is what an event does to the parent's count.
func delta(c *event.Change) (parent string, d int64) {
	doc := c.New
	if doc == nil {
		doc = c.Old
	}
	if !doc.Bool("isReply") || doc.String("parentCommentId") == "" {
		return "", 0
	}
	parent = path.Join(path.Dir(doc.Path), doc.String("parentCommentId"))
	switch {
	case c.Old == nil && c.New != nil && !c.New.Bool("deleted"):
		return parent, 1
	case c.Old != nil && c.New != nil && !c.Old.Bool("deleted") && c.New.Bool("deleted"):
		return parent, -1
	}
	return "", 0
}

// Handle is the CloudEvent function for feedbackRequests/{r}/comments/{c} written.
func (h *Handler) Handle(ctx context.Context, e cloudevent.Event) error {
	c, err := event.Decode(e)
	if err != nil {
		return err
	}
	parent, d := delta(c)
	if d == 0 {
		return nil
	}
	ledger := h.DB.Collection(Ledger).Doc(c.ID)
	parentRef := h.DB.Doc(parent)
	return h.DB.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		if _, err := tx.Get(ledger); err == nil {
			return nil // already handled
		} else if status.Code(err) != codes.NotFound {
			return err
		}
		snap, err := tx.Get(parentRef)
		if status.Code(err) == codes.NotFound {
			return tx.Create(ledger, map[string]any{"handledAt": firestore.ServerTimestamp, "skipped": "parent missing"})
		}
		if err != nil {
			return err
		}
		n, _ := snap.DataAt("repliesCount")
		count, _ := n.(int64)
		count = max(0, count+d)
		if err := tx.Update(parentRef, []firestore.Update{{Path: "repliesCount", Value: count}}); err != nil {
			return err
		}
		return tx.Create(ledger, map[string]any{"handledAt": firestore.ServerTimestamp, "document": parent})
	})
}
