package functions_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// TestFunctions_ConcurrentReviewsAllReachTheMentor: reviews of one mentor
// written at the same time are delivered to review-gather concurrently (one
// queue per document, as Eventarc does); each gathering must not overwrite a
// later one with the reviews it read earlier, so the mentor's
// users/{uid}.reviews ends up with every review.
func TestFunctions_ConcurrentReviewsAllReachTheMentor(t *testing.T) {
	ctx := context.Background()
	inst, _ := startWithFunctions(t)
	db := adminClient(t, inst)
	mentor := db.Collection("users").Doc("maya")
	if _, err := mentor.Set(ctx, map[string]any{"name": "Maya Chen", "reviews": []any{}}); err != nil {
		t.Fatal(err)
	}
	const rounds, perRound = 5, 12
	for round := range rounds {
		var wg sync.WaitGroup
		for i := range perRound {
			wg.Add(1)
			time.Sleep(time.Duration(i%3) * time.Millisecond)
			go func() {
				defer wg.Done()
				_, err := db.Collection("reviews").Doc(fmt.Sprintf("r%d-%d", round, i)).Set(ctx, map[string]any{
					"mentorId": "maya", "requesterId": "sam", "reviewerName": "Sam Taylor", "rating": 4,
					"text": "Clear.", "createdAt": firestore.ServerTimestamp,
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		want := (round + 1) * perRound
		loupetest.Eventually(t, fmt.Sprintf("all %d reviews in users/maya.reviews", want), func() bool {
			snap, err := mentor.Get(ctx)
			if err != nil {
				return false
			}
			reviews, _ := snap.DataAt("reviews")
			list, _ := reviews.([]any)
			return len(list) == want
		})
	}
}
