// Package profiles keeps what others may see of a person: users/{uid} is
// private to its owner (e-mail, push token, Stripe account, role), and
// mentors/{uid} is its public projection, which the directory and mentor
// pages read signed in or not.
//
// A profile is listed (has a mentors/{uid} document) only while its owner
// mentors and the profile is complete: a title, a bio, at least one category
// and at least one rate card. Reviews (reviews/{requestId}, one per
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
	"math"
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
	cloudevent "github.com/cloudevents/sdk-go/v2/event"
	"github.com/loupe-dev/loupe/functions/internal/event"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Collections this package reads and writes.
const (
	Users   = "users"
	Mentors = "mentors"
	Reviews = "reviews"
)

// RecentReviews is how many reviews the public projection carries.
const RecentReviews = 10

// Handler handles profile and review events.
type Handler struct{ DB *firestore.Client }

// Missing names what a mentor profile lacks before it is listed, in the
// order the profile page asks for them; empty when it is complete.
func Missing(p map[string]any) []string {
	var missing []string
	if strings.TrimSpace(str(p["title"])) == "" {
		missing = append(missing, "title")
	}
	if strings.TrimSpace(str(p["bio"])) == "" {
		missing = append(missing, "bio")
	}
	if len(list(p["taxonomySelections"])) == 0 {
		missing = append(missing, "category")
	}
	cards := 0
	for _, c := range list(p["rateCards"]) {
		m, _ := c.(map[string]any)
		if strings.TrimSpace(str(m["duration"])) != "" && number(m["price"]) > 0 {
			cards++
		}
	}
	if cards == 0 {
		missing = append(missing, "rate card")
	}
	return missing
}

// Listed reports whether a profile belongs in the directory.
func Listed(p map[string]any) bool {
	mentor, _ := p["isMentor"].(bool)
	return mentor && len(Missing(p)) == 0
}

// Public is the projection of a listed profile: what anyone may read.
// bookable says whether the mentor can take paid requests (payouts
// connected), without exposing the Stripe fields themselves.
func Public(uid string, p map[string]any) map[string]any {
	reviews := list(p["reviews"])
	sum := 0.0
	for _, r := range reviews {
		m, _ := r.(map[string]any)
		sum += number(m["rating"])
	}
	average := 0.0
	if len(reviews) > 0 {
		average = math.Round(sum/float64(len(reviews))*10) / 10
	}
	recent := reviews
	if len(recent) > RecentReviews {
		recent = recent[:RecentReviews]
	}
	connected, _ := p["stripeConnected"].(bool)
	out := map[string]any{"id": uid, "bookable": connected,
		"rating": map[string]any{"average": average, "count": int64(len(reviews))}, "reviews": recent}
	for _, k := range []string{"name", "displayName", "photoURL", "title", "bio", "expertise", "taxonomySelections",
		"previouslyWorkedWith", "social", "rateCards", "updatedAt"} {
		if v, ok := p[k]; ok {
			out[k] = v
		}
	}
	return out
}

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

// Project brings mentors/{uid} in line with users/{uid}.
func (h *Handler) Project(ctx context.Context, uid string) error {
	public := h.DB.Collection(Mentors).Doc(uid)
	snap, err := h.DB.Collection(Users).Doc(uid).Get(ctx)
	if status.Code(err) == codes.NotFound || (err == nil && !Listed(snap.Data())) {
		_, err = public.Delete(ctx)
		return err
	}
	if err != nil {
		return fmt.Errorf("read profile %s: %w", uid, err)
	}
	_, err = public.Set(ctx, Public(uid, snap.Data()))
	return err
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
// first; a mentor without a profile is left alone.
func (h *Handler) Gather(ctx context.Context, mentor string) error {
	docs, err := h.DB.Collection(Reviews).Where("mentorId", "==", mentor).Documents(ctx).GetAll()
	if err != nil {
		return fmt.Errorf("read reviews of %s: %w", mentor, err)
	}
	type dated struct {
		at  time.Time
		row map[string]any
	}
	var rows []dated
	for _, d := range docs {
		r := d.Data()
		at, _ := r["createdAt"].(time.Time)
		rows = append(rows, dated{at, map[string]any{"requestId": d.Ref.ID, "reviewerName": str(r["reviewerName"]),
			"rating": int64(number(r["rating"])), "text": str(r["text"]), "createdAt": at}})
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if !rows[i].at.Equal(rows[j].at) {
			return rows[i].at.After(rows[j].at)
		}
		return str(rows[i].row["requestId"]) < str(rows[j].row["requestId"])
	})
	reviews := make([]any, len(rows))
	for i, r := range rows {
		reviews[i] = r.row
	}
	_, err = h.DB.Collection(Users).Doc(mentor).Update(ctx, []firestore.Update{{Path: "reviews", Value: reviews}})
	if status.Code(err) == codes.NotFound {
		return nil
	}
	return err
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func number(v any) float64 {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}
