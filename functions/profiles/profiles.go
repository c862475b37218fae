// Package profiles keeps what others may see of a person: users/{uid} is
// private to its owner (e-mail, push token, Stripe account, role), and
// mentors/{uid} is its public projection, which the directory and mentor
// pages read signed in or not.
//
// A profile is listed (has a mentors/{uid} document) only while package
// listing says so. Reviews (reviews/{requestId}, one per
// completed request, written by its requester) are gathered into the
// mentor's users/{uid}.reviews (the spec's field), newest first, and the
// projection carries their average, count and the latest few.
//
// Both functions recompute from the stored documents rather than apply the
// event's change, so a redelivered or late event converges on the same
// result and every write is idempotent.
package profiles

import (
	"context"
	"fmt"
	"strings"

	"cloud.google.com/go/firestore"
	cloudevent "github.com/cloudevents/sdk-go/v2/event"
	"github.com/loupe-dev/loupe/functions/internal/event"
	"github.com/loupe-dev/loupe/functions/listing"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Collections this package reads and writes.
const (
	Users   = "users"
	Mentors = "mentors"
	Reviews = "reviews"
)

// Handler handles profile and review events.
type Handler struct{ DB *firestore.Client }

// HandleProfile is the CloudEvent function for users/{uid} written: it
// writes mentors/{uid} from the stored profile, or deletes it when the
// profile is gone or not listed.
func (h *Handler) HandleProfile(ctx context.Context, e cloudevent.Event) error {
	c, err := event.Decode(e)
	if err != nil {
		return err
	}
	doc := c.New
	if doc == nil {
		doc = c.Old
	}
	uid := doc.Path[strings.LastIndex(doc.Path, "/")+1:]
	return h.Project(ctx, uid)
}

// Project brings mentors/{uid} in line with users/{uid}; listedAt is when
// the mentor was first listed (kept while they stay listed, for the
// directory's "newest" order). Events of one
// profile may be delivered concurrently, so it runs in a transaction that
// reads the profile: a projection of an older profile can then never be
// written after one of a newer.
func (h *Handler) Project(ctx context.Context, uid string) error {
	profile := h.DB.Collection(Users).Doc(uid)
	public := h.DB.Collection(Mentors).Doc(uid)
	return h.DB.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(profile)
		if status.Code(err) == codes.NotFound || (err == nil && !listing.Listed(snap.Data())) {
			return tx.Delete(public)
		}
		if err != nil {
			return fmt.Errorf("read profile %s: %w", uid, err)
		}
		projection := listing.Public(uid, snap.Data())
		projection["listedAt"] = firestore.ServerTimestamp
		if listed, err := tx.Get(public); err == nil && listed.Data()["listedAt"] != nil {
			projection["listedAt"] = listed.Data()["listedAt"]
		} else if err != nil && status.Code(err) != codes.NotFound {
			return fmt.Errorf("read mentors/%s: %w", uid, err)
		}
		return tx.Set(public, projection)
	})
}

// HandleReview is the CloudEvent function for reviews/{id} written: it
// gathers the mentor's reviews into users/{mentorId}.reviews.
func (h *Handler) HandleReview(ctx context.Context, e cloudevent.Event) error {
	c, err := event.Decode(e)
	if err != nil {
		return err
	}
	mentor := c.New.String("mentorId")
	if mentor == "" {
		mentor = c.Old.String("mentorId")
	}
	if mentor == "" {
		return nil
	}
	return h.Gather(ctx, mentor)
}

// Gather sets users/{mentor}.reviews to every review of the mentor, newest
// first; a mentor without a profile is left alone. Reviews of one mentor
// are gathered concurrently (one event per review), so it runs in a
// transaction that reads the profile before the reviews: a gathering that
// read fewer reviews can then never write after one that read more.
func (h *Handler) Gather(ctx context.Context, mentor string) error {
	profile := h.DB.Collection(Users).Doc(mentor)
	reviewsOf := h.DB.Collection(Reviews).Where("mentorId", "==", mentor)
	return h.DB.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(profile)
		if status.Code(err) == codes.NotFound {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read profile %s: %w", mentor, err)
		}
		docs, err := tx.Documents(reviewsOf).GetAll()
		if err != nil {
			return fmt.Errorf("read reviews of %s: %w", mentor, err)
		}
		rows := map[string]map[string]any{}
		for _, d := range docs {
			rows[d.Ref.ID] = d.Data()
		}
		return tx.Update(snap.Ref, []firestore.Update{{Path: "reviews", Value: listing.Reviews(rows)}})
	})
}
