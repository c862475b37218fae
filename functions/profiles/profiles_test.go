package profiles_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/functions/internal/loupetest"
	"github.com/loupe-dev/loupe/functions/profiles"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestProfile_ListedWhileComplete: a complete mentor profile gets a public
// projection without its private fields; an edit keeps the first listedAt;
// turning mentoring off removes the projection. Reviews are gathered newest
// first into the profile, and the projection carries their average.
func TestProfile_ListedWhileComplete(t *testing.T) {
	ctx := context.Background()
	l := loupetest.Start(t)
	h := &profiles.Handler{DB: l.Firestore}
	user := l.Firestore.Collection(profiles.Users).Doc("maya")
	public := l.Firestore.Collection(profiles.Mentors).Doc("maya")
	profile := map[string]any{"name": "Maya Chen", "email": "maya@example.com", "isMentor": true, "title": "Guitarist",
		"bio": "Timing and tone.", "taxonomySelections": []any{"music"}, "stripeConnected": true,
		"rateCards": []any{map[string]any{"duration": "Up to 1 min", "price": int64(25)}}}
	if _, err := user.Set(ctx, profile); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	for id, r := range map[string]map[string]any{
		"r1": {"mentorId": "maya", "reviewerName": "Sam", "rating": int64(4), "text": "Good", "createdAt": old},
		"r2": {"mentorId": "maya", "reviewerName": "Alex", "rating": int64(5), "text": "Great", "createdAt": old.Add(time.Hour)},
		"r3": {"mentorId": "diego", "reviewerName": "Sam", "rating": int64(1), "text": "Not Maya's", "createdAt": old},
	} {
		if _, err := l.Firestore.Collection(profiles.Reviews).Doc(id).Set(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Gather(ctx, "maya"); err != nil {
		t.Fatal(err)
	}
	if err := h.Project(ctx, "maya"); err != nil {
		t.Fatal(err)
	}
	first, err := public.Get(ctx)
	if err != nil {
		t.Fatalf("a complete mentor is not listed: %v", err)
	}
	reviews, _ := first.Data()["reviews"].([]any)
	rating, _ := first.Data()["rating"].(map[string]any)
	if _, ok := first.Data()["email"]; ok || first.Data()["bookable"] != true || len(reviews) != 2 ||
		reviews[0].(map[string]any)["requestId"] != "r2" || rating["average"] != 4.5 || rating["count"] != int64(2) {
		t.Errorf("the projection = %v", first.Data())
	}
	listedAt := first.Data()["listedAt"]
	if listedAt == nil {
		t.Fatal("the projection has no listedAt")
	}

	if _, err := user.Update(ctx, []firestore.Update{{Path: "title", Value: "Jazz guitarist"}}); err != nil {
		t.Fatal(err)
	}
	if err := h.Project(ctx, "maya"); err != nil {
		t.Fatal(err)
	}
	edited, err := public.Get(ctx)
	if err != nil || edited.Data()["title"] != "Jazz guitarist" || !edited.Data()["listedAt"].(time.Time).Equal(listedAt.(time.Time)) {
		t.Errorf("after an edit: %v, %v (listedAt was %v)", edited.Data(), err, listedAt)
	}

	if _, err := user.Update(ctx, []firestore.Update{{Path: "isMentor", Value: false}}); err != nil {
		t.Fatal(err)
	}
	if err := h.Project(ctx, "maya"); err != nil {
		t.Fatal(err)
	}
	if _, err := public.Get(ctx); status.Code(err) != codes.NotFound {
		t.Errorf("after mentoring is turned off, mentors/maya: %v, want NotFound", err)
	}
}
