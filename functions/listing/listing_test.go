package listing_test

import (
	"reflect"
	"testing"

	"github.com/loupe-dev/loupe/functions/listing"
)

func complete() map[string]any {
	return map[string]any{
		"isMentor": true, "name": "Maya", "email": "maya@loupe.dev", "fcmToken": "tok", "role": "user",
		"stripeConnected": true, "stripeAccountId": "acct_1", "title": "Guitarist", "bio": "Fifteen years on stage.",
		"taxonomySelections": []any{"music"}, "rateCards": []any{map[string]any{"duration": "Up to 1 min", "price": int64(20)}},
	}
}

// TestMissing names what keeps a mentor out of the directory.
func TestMissing(t *testing.T) {
	for _, c := range []struct {
		name   string
		change map[string]any
		want   []string
	}{
		{"complete", nil, nil},
		{"blank title", map[string]any{"title": "  "}, []string{"title"}},
		{"no bio, no categories", map[string]any{"bio": "", "taxonomySelections": []any{}}, []string{"bio", "category"}},
		{"only free or unnamed cards", map[string]any{"rateCards": []any{map[string]any{"duration": "1 min", "price": 0.0},
			map[string]any{"duration": "", "price": 5.0}}}, []string{"rate card"}},
		{"new account", map[string]any{"title": "", "bio": nil, "taxonomySelections": nil}, []string{"title", "bio", "category"}},
	} {
		p := complete()
		for k, v := range c.change {
			p[k] = v
		}
		if got := listing.Missing(p); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Missing = %v, want %v", c.name, got, c.want)
		}
		if got := listing.Listed(p); got != (c.want == nil) {
			t.Errorf("%s: Listed = %v", c.name, got)
		}
	}
	p := complete()
	p["isMentor"] = false
	if listing.Listed(p) {
		t.Error("a complete profile with mentoring off is listed")
	}
}

// TestPublic never copies private fields and summarises the reviews.
func TestPublic(t *testing.T) {
	p := complete()
	p["reviews"] = []any{map[string]any{"rating": int64(5)}, map[string]any{"rating": int64(4)}, map[string]any{"rating": int64(4)}}
	got := listing.Public("maya", p)
	for _, k := range []string{"email", "fcmToken", "role", "stripeConnected", "stripeAccountId", "isMentor"} {
		if _, ok := got[k]; ok {
			t.Errorf("the projection has %s", k)
		}
	}
	if got["bookable"] != true || got["id"] != "maya" || got["title"] != "Guitarist" {
		t.Errorf("projection = %v", got)
	}
	if r := got["rating"].(map[string]any); r["average"] != 4.3 || r["count"] != int64(3) {
		t.Errorf("rating = %v, want 4.3 over 3", r)
	}
}

// TestPublic_OnlyBookableCards: a blank or free card stays off the public
// profile, so nobody can book it.
func TestPublic_OnlyBookableCards(t *testing.T) {
	p := complete()
	p["rateCards"] = []any{map[string]any{"duration": "", "price": 0.0}, map[string]any{"duration": "Up to 1 min", "price": int64(20)},
		map[string]any{"duration": "1-3 mins", "price": 0.0}}
	p["turnaroundDays"] = int64(3)
	got := listing.Public("maya", p)
	cards := got["rateCards"].([]any)
	if len(cards) != 1 || cards[0].(map[string]any)["duration"] != "Up to 1 min" {
		t.Errorf("public rate cards = %v", cards)
	}
	if got["turnaroundDays"] != int64(3) {
		t.Errorf("turnaroundDays = %v", got["turnaroundDays"])
	}
}
