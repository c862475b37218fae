package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
)

// deliverProfileEvent posts a users/{uid} written event to the functions
// process at fnURL, as Eventarc delivers it: at any time, concurrently with
// other deliveries.
func deliverProfileEvent(t *testing.T, fnURL, uid, id string) {
	t.Helper()
	name := "projects/demo-loupe/databases/(default)/documents/users/" + uid
	body, _ := json.Marshal(map[string]any{"value": map[string]any{"name": name, "fields": map[string]any{}}})
	r, _ := http.NewRequest("POST", fnURL+"/events/profile-public", bytes.NewReader(body))
	for k, v := range map[string]string{"ce-specversion": "1.0", "ce-id": id, "ce-type": "google.cloud.firestore.document.v1.written",
		"ce-source": "//firestore.googleapis.com/projects/demo-loupe/databases/(default)", "ce-subject": "documents/users/" + uid,
		"Content-Type": "application/json"} {
		r.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Errorf("delivery %s: HTTP %d", id, resp.StatusCode)
	}
}

// TestFunctions_ConcurrentProfileEventsLeaveTheLatestProjection: events of
// one profile delivered at the same time (Eventarc neither orders nor
// serialises them) must not leave mentors/{uid} projecting an older
// users/{uid} than the one the last delivered event saw. The deliveries of
// the older version are held between their read and their write by a
// transaction holding mentors/{uid}, while the profile changes and the
// newer version's event is delivered.
func TestFunctions_ConcurrentProfileEventsLeaveTheLatestProjection(t *testing.T) {
	ctx := context.Background()
	inst, fnURL := startWithFunctions(t)
	db := adminClient(t, inst)
	r, _ := http.NewRequest("PUT", inst.URL+"/emulator/v1/functions/backgroundTriggers", bytes.NewReader([]byte(`{"paused": true}`)))
	if resp, err := http.DefaultClient.Do(r); err != nil || resp.StatusCode != 200 {
		t.Fatalf("pause the triggers: %v %v", resp, err)
	}
	profile := db.Collection("users").Doc("maya")
	public := db.Collection("mentors").Doc("maya")
	title := func(ref *firestore.DocumentRef) string {
		snap, err := ref.Get(ctx)
		if err != nil {
			return ""
		}
		s, _ := snap.Data()["title"].(string)
		return s
	}
	if _, err := profile.Set(ctx, map[string]any{"name": "Maya Chen", "isMentor": true, "title": "Cellist 0", "bio": "Plays.",
		"taxonomySelections": []any{"music"}, "rateCards": []any{map[string]any{"duration": "1-3 mins", "price": 30}}}); err != nil {
		t.Fatal(err)
	}
	deliverProfileEvent(t, fnURL, "maya", "start")
	if got := title(public); got != "Cellist 0" {
		t.Fatalf("mentors/maya title %q after the first event", got)
	}
	const rounds, stale = 3, 4
	for round := 1; round <= rounds; round++ {
		held, release := make(chan struct{}), make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			err := db.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
				if _, err := tx.Get(public); err != nil {
					return err
				}
				select {
				case <-held:
				default:
					close(held)
				}
				<-release
				return nil
			})
			if err != nil {
				t.Errorf("the transaction holding mentors/maya: %v", err)
			}
		})
		<-held
		for i := range stale {
			wg.Go(func() { deliverProfileEvent(t, fnURL, "maya", fmt.Sprintf("old-%d-%d", round, i)) })
		}
		time.Sleep(300 * time.Millisecond) // the older events have read the profile
		newTitle := fmt.Sprintf("Cellist %d", round)
		wg.Go(func() {
			if _, err := profile.Update(ctx, []firestore.Update{{Path: "title", Value: newTitle}}); err != nil {
				t.Error(err)
				return
			}
			deliverProfileEvent(t, fnURL, "maya", fmt.Sprintf("new-%d", round))
		})
		time.Sleep(300 * time.Millisecond)
		close(release)
		wg.Wait()
		if got := title(public); got != newTitle {
			t.Fatalf("round %d: mentors/maya title %q after every event was delivered, but users/maya's is %q", round, got, title(profile))
		}
	}
}
