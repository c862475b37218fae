package fanout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
	cloudevent "github.com/cloudevents/sdk-go/v2/event"
	"github.com/loupe-dev/loupe/functions/internal/event"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// BatchWindow is how close in time a person's comments on one request must
// be to share a notification.
const BatchWindow = 5 * time.Minute

// Batches holds one pointer per (recipient, request, author) to the
// notification that author's latest comments went into:
// notificationBatches/{recipient}_{request}_{author} = {notificationId, lastAt}.
const Batches = "notificationBatches"

// DeletedText is what a deleted comment reads, in the thread and in the
// notifications that quoted it (docs/product-spec.md §4).
const DeletedText = "[Deleted]"

// commentTitle is a comment notification's title: "Maya Chen left
// feedback", or "Maya Chen left 7 comments" for a batch.
func commentTitle(author string, count int) string {
	if count == 1 {
		return author + " left feedback"
	}
	return fmt.Sprintf("%s left %d comments", author, count)
}

// commentMessage quotes the latest comment: the quote alone, or for a
// batch the request it is on and the quote.
func commentMessage(count int, requestTitle, quote string) string {
	if count == 1 {
		return quote
	}
	return fmt.Sprintf("On “%s”. Latest: %s", requestTitle, quote)
}

// quote is how a notification quotes a comment: its first 120 characters
// in quotes, or [Deleted].
func quote(content string, deleted bool) string {
	if deleted {
		return DeletedText
	}
	return "“" + snippet(content, 120) + "”"
}

// HandleComment is the CloudEvent function for
// feedbackRequests/{r}/comments/{c} created: the mentor's comments notify
// the requester (feedback_received). Comments by the mentor on one request
// within BatchWindow of each other share one notification while it is
// unread ("Maya Chen left 3 comments"), which moves to the top of the list;
// a comment already in it, or an event already handled, changes nothing,
// so redelivery is harmless. Only a new notification is pushed. A comment
// carried forward to a new version (carriedFrom) notifies no one.
func (h *Handler) HandleComment(ctx context.Context, e cloudevent.Event) error {
	c, err := event.Decode(e)
	if err != nil {
		return err
	}
	// A comment carried forward to a new version is not new feedback.
	if c.Old != nil || c.New == nil || c.New.String("carriedFrom") != "" {
		return nil
	}
	parts := strings.Split(c.New.Path, "/")
	if len(parts) != 4 {
		return nil
	}
	requestID, commentID := parts[1], parts[3]
	snap, err := h.DB.Collection("feedbackRequests").Doc(requestID).Get(ctx)
	if status.Code(err) == codes.NotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read request %s: %w", requestID, err)
	}
	req := snap.Data()
	author := c.New.String("userId")
	if req["mentorId"] != author {
		return nil
	}
	at, ok := c.New.Fields["timestamp"].(time.Time)
	if !ok {
		at = time.Now()
	}
	requester, _ := req["requesterId"].(string)
	mentorName, _ := req["mentorName"].(string)
	title, _ := req["title"].(string)
	b := batch{eventID: c.ID, recipient: requester, requestID: requestID, requestTitle: title, commentID: commentID,
		author: author, authorName: mentorName, at: at}
	n, created, err := h.addToBatch(ctx, b)
	if err != nil || !created {
		return err
	}
	return h.push(ctx, n)
}

// batch is one comment on its way into a notification.
type batch struct {
	eventID, recipient, requestID, requestTitle, commentID, author, authorName string
	at                                                                         time.Time
}

// addToBatch puts a comment into its author's open notification on the
// request, or into a new one (notifications/evt-{event id}), in one
// transaction; created says a new notification n was written.
func (h *Handler) addToBatch(ctx context.Context, b batch) (n Notification, created bool, err error) {
	notes := h.DB.Collection("notifications")
	own := notes.Doc("evt-" + b.eventID)
	pointer := h.DB.Collection(Batches).Doc(b.recipient + "_" + b.requestID + "_" + b.author)
	comment := h.DB.Collection("feedbackRequests").Doc(b.requestID).Collection("comments").Doc(b.commentID)
	err = h.DB.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		created = false
		if _, err := tx.Get(own); err == nil {
			return nil // this event made its notification before
		} else if status.Code(err) != codes.NotFound {
			return err
		}
		cs, err := tx.Get(comment)
		if err != nil && status.Code(err) != codes.NotFound {
			return err
		}
		content, _ := cs.Data()["content"].(string)
		deleted, _ := cs.Data()["deleted"].(bool)
		said := quote(content, deleted || !cs.Exists())
		open, err := h.openBatch(tx, pointer, b.at)
		if err != nil {
			return err
		}
		if open != nil {
			data, _ := open.Data()["data"].(map[string]any)
			ids, _ := data["commentIds"].([]any)
			if slices.Contains(ids, any(b.commentID)) {
				return nil // this comment is in it already
			}
			count := len(ids) + 1
			if err := tx.Update(open.Ref, []firestore.Update{
				{Path: "title", Value: commentTitle(b.authorName, count)},
				{Path: "message", Value: commentMessage(count, b.requestTitle, said)},
				{Path: "data.commentId", Value: b.commentID},
				{Path: "data.commentIds", Value: firestore.ArrayUnion(b.commentID)},
				{Path: "data.count", Value: int64(count)},
				{Path: "createdAt", Value: firestore.ServerTimestamp},
			}); err != nil {
				return err
			}
			return tx.Set(pointer, map[string]any{"lastAt": b.at}, firestore.MergeAll)
		}
		n = Notification{UserID: b.recipient, Type: "feedback_received", Title: commentTitle(b.authorName, 1),
			Message: commentMessage(1, b.requestTitle, said), Link: "/requests/" + b.requestID,
			Data: map[string]any{"requestId": b.requestID, "requestTitle": b.requestTitle, "commentId": b.commentID,
				"commentIds": []any{b.commentID}, "count": int64(1), "authorId": b.author}}
		if err := tx.Create(own, n.document()); err != nil {
			return err
		}
		created = true
		return tx.Set(pointer, map[string]any{"notificationId": own.ID, "lastAt": b.at})
	})
	return n, created, err
}

// openBatch is the notification a comment at `at` joins: the one the
// pointer names, when its last comment is within BatchWindow of at and it
// is unread; nil otherwise.
func (h *Handler) openBatch(tx *firestore.Transaction, pointer *firestore.DocumentRef, at time.Time) (*firestore.DocumentSnapshot, error) {
	p, err := tx.Get(pointer)
	if status.Code(err) == codes.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	last, _ := p.Data()["lastAt"].(time.Time)
	id, _ := p.Data()["notificationId"].(string)
	if id == "" || at.Sub(last).Abs() > BatchWindow {
		return nil, nil
	}
	n, err := tx.Get(h.DB.Collection("notifications").Doc(id))
	if status.Code(err) == codes.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if read, _ := n.Data()["read"].(bool); read {
		return nil, nil
	}
	return n, nil
}

// HandleCommentUpdate is the CloudEvent function for
// feedbackRequests/{r}/comments/{c} updated: when a comment is deleted,
// every notification that quotes it (data.commentId) quotes "[Deleted]"
// instead, for whoever it was sent to. Setting the same words again is
// harmless, so redelivery is too.
func (h *Handler) HandleCommentUpdate(ctx context.Context, e cloudevent.Event) error {
	c, err := event.Decode(e)
	if err != nil {
		return err
	}
	if c.Old == nil || c.New == nil || c.Old.Bool("deleted") || !c.New.Bool("deleted") {
		return nil
	}
	commentID := c.New.Path[strings.LastIndex(c.New.Path, "/")+1:]
	quoting, err := h.DB.Collection("notifications").Where("data.commentId", "==", commentID).Documents(ctx).GetAll()
	if err != nil {
		return fmt.Errorf("find the notifications of comment %s: %w", commentID, err)
	}
	var errs []error
	for _, n := range quoting {
		data, _ := n.Data()["data"].(map[string]any)
		count, _ := data["count"].(int64)
		title, _ := data["requestTitle"].(string)
		message := commentMessage(max(1, int(count)), title, DeletedText)
		if n.Data()["message"] == message {
			continue
		}
		if _, err := n.Ref.Update(ctx, []firestore.Update{{Path: "message", Value: message}}); err != nil &&
			status.Code(err) != codes.NotFound {
			errs = append(errs, fmt.Errorf("redact %s: %w", n.Ref.ID, err))
		}
	}
	return errors.Join(errs...)
}
