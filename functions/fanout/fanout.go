// Package fanout turns marketplace events into notifications: a feedback
// request created notifies its mentor (feedback_request); the mentor
// commenting on it or completing it notifies the requester
// (feedback_received; comments.go batches a person's comments and redacts
// deleted ones); a payment recorded notifies the mentor (payment_received,
// with the amount in the payer's currency); turnaround.go reminds of due
// dates. Notification ids derive from the event id (or the request, for
// reminders), so a redelivered event creates nothing new.
package fanout

import (
	"context"
	"fmt"
	"strings"

	"cloud.google.com/go/firestore"
	"firebase.google.com/go/v4/messaging"
	cloudevent "github.com/cloudevents/sdk-go/v2/event"
	"github.com/loupe-dev/loupe/functions/internal/event"
	"github.com/loupe-dev/loupe/functions/internal/money"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Notification is what a user's bell shows (docs/product-spec.md §3).
type Notification struct {
	UserID, Type, Title, Message, Link string
	Data                               map[string]any
}

// document is the notification as stored (docs/product-spec.md §3), unread, created now.
func (n Notification) document() map[string]any {
	data := n.Data
	if data == nil {
		data = map[string]any{}
	}
	doc := map[string]any{"userId": n.UserID, "type": n.Type, "title": n.Title, "message": n.Message,
		"data": data, "read": false, "createdAt": firestore.ServerTimestamp}
	if n.Link != "" {
		doc["link"] = n.Link
	}
	return doc
}

// Pusher sends push messages (the Admin SDK's messaging client).
type Pusher interface {
	Send(ctx context.Context, m *messaging.Message) (string, error)
}

// Handler fans events out into notifications/{id}, each also pushed to the
// user's fcmToken when Push is set and the profile has one.
type Handler struct {
	DB   *firestore.Client
	Push Pusher
}

// Send writes a notification with a deterministic id and pushes it; writing
// it twice is a no-op, so a redelivered event pushes nothing new.
func (h *Handler) Send(ctx context.Context, id string, n Notification) error {
	_, err := h.DB.Collection("notifications").Doc(id).Create(ctx, n.document())
	if status.Code(err) == codes.AlreadyExists {
		return nil
	}
	if err != nil {
		return err
	}
	return h.push(ctx, n)
}

// push sends n to the user's fcmToken; a token FCM no longer knows is
// removed from the profile. A failed push does not fail the notification.
func (h *Handler) push(ctx context.Context, n Notification) error {
	if h.Push == nil {
		return nil
	}
	profile := h.DB.Collection("users").Doc(n.UserID)
	snap, err := profile.Get(ctx)
	if err != nil {
		return nil
	}
	token, _ := snap.DataAt("fcmToken")
	t, _ := token.(string)
	if t == "" {
		return nil
	}
	m := &messaging.Message{
		Token:        t,
		Notification: &messaging.Notification{Title: n.Title, Body: n.Message},
		Data:         map[string]string{"type": n.Type, "link": n.Link},
	}
	if n.Link != "" {
		m.Webpush = &messaging.WebpushConfig{FCMOptions: &messaging.WebpushFCMOptions{Link: n.Link}}
	}
	if _, err := h.Push.Send(ctx, m); messaging.IsUnregistered(err) {
		_, err = profile.Update(ctx, []firestore.Update{{Path: "fcmToken", Value: firestore.Delete}})
		return err
	}
	return nil
}

func snippet(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// HandleRequest is the CloudEvent function for feedbackRequests/{id} written.
func (h *Handler) HandleRequest(ctx context.Context, e cloudevent.Event) error {
	c, err := event.Decode(e)
	if err != nil {
		return err
	}
	r := c.New
	if r == nil {
		return nil
	}
	id := r.Path[strings.LastIndex(r.Path, "/")+1:]
	link := "/requests/" + id
	data := map[string]any{"requestId": id}
	title := r.String("title")
	switch {
	case c.Old == nil:
		return h.Send(ctx, "evt-"+c.ID, Notification{UserID: r.String("mentorId"), Type: "feedback_request",
			Title: "New feedback request", Message: fmt.Sprintf("%s asked for feedback on “%s”", r.String("requesterName"), title), Link: link, Data: data})
	case r.Int("versionCount") > max(c.Old.Int("versionCount"), 1):
		v := r.Int("versionCount")
		return h.Send(ctx, "evt-"+c.ID, Notification{UserID: r.String("mentorId"), Type: "feedback_request",
			Title: "New version", Message: fmt.Sprintf("%s uploaded v%d of “%s”.", r.String("requesterName"), v, title),
			Link: fmt.Sprintf("%s?v=%d", link, v), Data: data})
	case c.Old.String("status") == "pending" && r.String("status") == "accepted":
		return h.Send(ctx, "evt-"+c.ID, Notification{UserID: r.String("requesterId"), Type: "feedback_accepted",
			Title: "Request accepted", Message: fmt.Sprintf("%s accepted “%s” and is working on it.", r.String("mentorName"), title), Link: link, Data: data})
	case c.Old.String("status") != "completed" && r.String("status") == "completed":
		return h.Send(ctx, "evt-"+c.ID, Notification{UserID: r.String("requesterId"), Type: "feedback_received",
			Title: "Feedback completed", Message: fmt.Sprintf("%s marked “%s” as completed.", r.String("mentorName"), title), Link: link, Data: data})
	case c.Old.String("paymentStatus") != "paid" && r.String("paymentStatus") == "paid":
		return h.Send(ctx, "evt-"+c.ID, Notification{UserID: r.String("mentorId"), Type: "payment_received",
			Title: "Payment received", Message: h.paidMessage(ctx, r), Link: link, Data: data})
	}
	return nil
}

// paidMessage says who paid what for a request: the amount as charged, in
// the payer's currency ("Lena Vogel paid €38.97 for “Bridge voicings”."),
// or without it when the payment record cannot be read.
func (h *Handler) paidMessage(ctx context.Context, r *event.Document) string {
	who, title := r.String("requesterName"), r.String("title")
	if id := r.String("paymentId"); id != "" {
		snap, err := h.DB.Collection("payments").Doc(id).Get(ctx)
		if err == nil {
			amount, _ := snap.Data()["amount"].(int64)
			currency, _ := snap.Data()["currency"].(string)
			if amount > 0 && currency != "" {
				return fmt.Sprintf("%s paid %s for “%s”.", who, money.FormatMinor(amount, currency), title)
			}
		}
	}
	return fmt.Sprintf("%s paid for “%s”.", who, title)
}
