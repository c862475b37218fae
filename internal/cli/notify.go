package cli

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"firebase.google.com/go/v4/messaging"
	"github.com/loupe-dev/loupe/internal/marketplace"
	"github.com/spf13/cobra"
)

// NotifyOptions are the flags of `loupe app notify`.
type NotifyOptions struct {
	Type, Title, Message, Link string
}

// NewCmdNotify builds `loupe app notify UID`: it writes the notification a
// user's bell shows, in the shape the fan-out function writes.
func NewCmdNotify() *cobra.Command {
	opts := &NotifyOptions{}
	g := newAdminGroup("notify", "")
	cmd := g.cmd
	cmd.Use = "notify UID"
	cmd.Short = "Send a user a notification"
	cmd.Args = exactArgs(1)
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if opts.Title == "" || opts.Message == "" {
			return usageErrorf("notify needs --title and --message")
		}
		a, err := g.target.connect(c.Context())
		if err != nil {
			return err
		}
		defer a.Close()
		return notify(c.Context(), a, printer{out: c.OutOrStdout(), json: g.target.JSON}, args[0], opts)
	}
	f := cmd.Flags()
	f.StringVar(&opts.Type, "type", "feedback_received", "feedback_request, feedback_received, payment_received, or any other")
	f.StringVar(&opts.Title, "title", "", "title (required)")
	f.StringVar(&opts.Message, "message", "", "message (required)")
	f.StringVar(&opts.Link, "link", "", "where clicking it leads, e.g. /requests/abc")
	return cmd
}

func notify(ctx context.Context, a *admin, p printer, uid string, o *NotifyOptions) error {
	if _, err := a.Auth.GetUser(ctx, uid); err != nil {
		return userErr(uid, err)
	}
	doc := map[string]any{
		"userId": uid, "type": o.Type, "title": o.Title, "message": o.Message,
		"data": map[string]any{}, "read": false, "createdAt": firestore.ServerTimestamp,
	}
	if o.Link != "" {
		doc["link"] = o.Link
	}
	ref, _, err := a.Firestore.Collection(marketplace.Notifications).Add(ctx, doc)
	if err != nil {
		return fmt.Errorf("notify %s: %w", uid, err)
	}
	pushed, err := push(ctx, a, uid, o)
	if err != nil {
		return err
	}
	msg := "notified " + uid + " (" + ref.ID + ")"
	if pushed {
		msg += ", pushed"
	}
	return p.done(msg, map[string]any{"id": ref.ID, "userId": uid, "pushed": pushed, "sentAt": time.Now().UTC()})
}

// push sends the notification to the user's fcmToken, as the fan-out does;
// a token FCM no longer knows is removed from the profile.
func push(ctx context.Context, a *admin, uid string, o *NotifyOptions) (bool, error) {
	snap, err := a.Firestore.Collection(marketplace.Users).Doc(uid).Get(ctx)
	if err != nil {
		return false, nil
	}
	token, _ := snap.Data()["fcmToken"].(string)
	if token == "" {
		return false, nil
	}
	client, err := a.messaging(ctx)
	if err != nil {
		return false, err
	}
	m := &messaging.Message{Token: token, Notification: &messaging.Notification{Title: o.Title, Body: o.Message},
		Data: map[string]string{"type": o.Type, "link": o.Link}}
	if o.Link != "" {
		m.Webpush = &messaging.WebpushConfig{FCMOptions: &messaging.WebpushFCMOptions{Link: o.Link}}
	}
	_, err = client.Send(ctx, m)
	if messaging.IsUnregistered(err) {
		_, err = snap.Ref.Update(ctx, []firestore.Update{{Path: "fcmToken", Value: firestore.Delete}})
		return false, err
	}
	if err != nil {
		return false, fmt.Errorf("push to %s: %w", uid, err)
	}
	return true, nil
}
