// Package marketplace holds Loupe's domain model as stored in Firestore: the
// collections, the user profile and its defaults (docs/product-spec.md §3, §6, §7). The web app
// mirrors these shapes in TypeScript; the CLI and the demo data use them here.
package marketplace

import "time"

// Collection names.
const (
	Users            = "users"
	Categories       = "categories"
	Notifications    = "notifications"
	FeedbackRequests = "feedbackRequests"
	Comments         = "comments"
)

// RateCard is one price of a mentor, in USD.
type RateCard struct {
	Duration string  `firestore:"duration" json:"duration"`
	Price    float64 `firestore:"price" json:"price"`
}

// DefaultRateCards are the rate cards every new profile starts with (docs/product-spec.md §7).
func DefaultRateCards() []RateCard {
	return []RateCard{
		{Duration: "Up to 1 min", Price: 20},
		{Duration: "1-3 mins", Price: 35},
		{Duration: "3-5 mins", Price: 50},
		{Duration: "5+ mins", Price: 75},
	}
}

// Social holds a profile's social links.
type Social struct {
	Instagram string `firestore:"instagram" json:"instagram"`
	Twitter   string `firestore:"twitter" json:"twitter"`
	Facebook  string `firestore:"facebook" json:"facebook"`
	LinkedIn  string `firestore:"linkedin" json:"linkedin"`
}

// Profile is users/{uid} (docs/product-spec.md §3). Role and StripeConnected are server-owned.
type Profile struct {
	ID                   string     `firestore:"id" json:"id"`
	Name                 string     `firestore:"name" json:"name"`
	DisplayName          string     `firestore:"displayName" json:"displayName"`
	Email                string     `firestore:"email" json:"email"`
	PhotoURL             string     `firestore:"photoURL" json:"photoURL"`
	Title                string     `firestore:"title" json:"title"`
	Bio                  string     `firestore:"bio" json:"bio"`
	Expertise            []string   `firestore:"expertise" json:"expertise"`
	TaxonomySelections   []string   `firestore:"taxonomySelections" json:"taxonomySelections"`
	PreviouslyWorkedWith string     `firestore:"previouslyWorkedWith" json:"previouslyWorkedWith"`
	Social               Social     `firestore:"social" json:"social"`
	RateCards            []RateCard `firestore:"rateCards" json:"rateCards"`
	IsMentor             bool       `firestore:"isMentor" json:"isMentor"`
	StripeConnected      bool       `firestore:"stripeConnected" json:"stripeConnected"`
	Reviews              []any      `firestore:"reviews" json:"reviews"`
	Role                 string     `firestore:"role" json:"role"`
	PreferredCurrency    string     `firestore:"preferredCurrency" json:"preferredCurrency"`
	UpdatedAt            time.Time  `firestore:"updatedAt" json:"updatedAt"`
}

// NewProfile is the profile created at sign-up: a mentor with role 'user'
// and the default rate cards (docs/product-spec.md §6, §7).
func NewProfile(uid, email, name string, now time.Time) Profile {
	return Profile{
		ID:                 uid,
		Name:               name,
		DisplayName:        name,
		Email:              email,
		Expertise:          []string{},
		TaxonomySelections: []string{},
		RateCards:          DefaultRateCards(),
		IsMentor:           true,
		Reviews:            []any{},
		Role:               "user",
		PreferredCurrency:  "USD",
		UpdatedAt:          now,
	}
}
