package listing_test

import (
	"math"
	"testing"

	"github.com/loupe-dev/loupe/functions/listing"
)

// TestCardLength reads the lengths mentors write on their rate cards.
func TestCardLength(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		label    string
		min, max float64
		ok       bool
	}{
		{"Up to 1 min", 0, 60, true},
		{"1-3 mins", 60, 180, true},
		{"3 – 5 minutes", 180, 300, true},
		{"5+ mins", 300, inf, true},
		{"Over 10 min", 600, inf, true},
		{"90 s", 0, 90, true},
		{"30 s to 2 min", 30, 120, true},
		{"2", 0, 120, true},
		{"Under 45 seconds", 0, 45, true},
		{"Full routine", 0, 0, false},
		{"", 0, 0, false},
		{"3-1 mins", 0, 0, false},
		{"5 parsecs", 0, 0, false},
	} {
		min, max, ok := listing.CardLength(c.label)
		if ok != c.ok || (ok && (min != c.min || max != c.max)) {
			t.Errorf("CardLength(%q) = %v, %v, %v; want %v, %v, %v", c.label, min, max, ok, c.min, c.max, c.ok)
		}
	}
}

// TestFits: a clip fits a card up to the card's limit (and half a second of
// rounding); a card that names no length fits any clip.
func TestFits(t *testing.T) {
	card := func(label string) map[string]any { return map[string]any{"duration": label, "price": int64(20)} }
	for _, c := range []struct {
		label   string
		seconds float64
		want    bool
	}{
		{"Up to 1 min", 60.04, true},
		{"Up to 1 min", 90, false},
		{"1-3 mins", 90, true},
		{"1-3 mins", 30, true},
		{"5+ mins", 3600, true},
		{"Full routine", 3600, true},
	} {
		if got := listing.Fits(card(c.label), c.seconds); got != c.want {
			t.Errorf("Fits(%q, %v) = %v", c.label, c.seconds, got)
		}
	}
}

// TestValidCards keeps only cards with a label and a positive price.
func TestValidCards(t *testing.T) {
	got := listing.ValidCards([]any{
		map[string]any{"duration": "Up to 1 min", "price": int64(20)},
		map[string]any{"duration": " ", "price": int64(20)},
		map[string]any{"duration": "1-3 mins", "price": 0.0},
		map[string]any{"duration": "3-5 mins", "price": -5.0},
		"not a card",
		map[string]any{"duration": "5+ mins", "price": 12.5},
	})
	if len(got) != 2 || got[0].(map[string]any)["duration"] != "Up to 1 min" || got[1].(map[string]any)["duration"] != "5+ mins" {
		t.Errorf("ValidCards = %v", got)
	}
}
