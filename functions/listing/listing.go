// Package listing decides what of a profile the public sees: whether a
// mentor is listed in the directory (mentoring on and the profile complete:
// a title, a bio, at least one category and one rate card), the public
// projection of a listed profile, and the reviews gathered for it. It is
// pure, so the profiles function and loupe's demo seed share it.
package listing

import (
	"math"
	"sort"
	"strings"
	"time"
)

// RecentReviews is how many reviews the public projection carries.
const RecentReviews = 10

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
	if len(ValidCards(list(p["rateCards"]))) == 0 {
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
// connected), without exposing the Stripe fields themselves; rateCards are
// only those that can be booked (ValidCard), so nobody books a blank or free
// card.
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
		"rating": map[string]any{"average": average, "count": int64(len(reviews))}, "reviews": recent,
		"rateCards": ValidCards(list(p["rateCards"]))}
	for _, k := range []string{"name", "displayName", "photoURL", "title", "bio", "expertise", "taxonomySelections",
		"previouslyWorkedWith", "social", "turnaroundDays", "introVideoUrl", "updatedAt"} {
		if v, ok := p[k]; ok {
			out[k] = v
		}
	}
	return out
}

// Reviews turns a mentor's review documents (by request id) into the
// spec's users/{uid}.reviews list: {requestId, reviewerName, rating, text,
// createdAt}, newest first (request id breaking ties).
func Reviews(docs map[string]map[string]any) []any {
	type dated struct {
		at  time.Time
		id  string
		row map[string]any
	}
	rows := make([]dated, 0, len(docs))
	for id, r := range docs {
		at, _ := r["createdAt"].(time.Time)
		rows = append(rows, dated{at, id, map[string]any{"requestId": id, "reviewerName": str(r["reviewerName"]),
			"rating": int64(number(r["rating"])), "text": str(r["text"]), "createdAt": at}})
	}
	sort.Slice(rows, func(i, j int) bool {
		if !rows[i].at.Equal(rows[j].at) {
			return rows[i].at.After(rows[j].at)
		}
		return rows[i].id < rows[j].id
	})
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r.row
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// CardPrice is a rate card's USD price, stored as an integer or a double;
// 0 when it has none.
func CardPrice(card map[string]any) float64 { return number(card["price"]) }

func number(v any) float64 {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}
