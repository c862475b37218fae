package fanout_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/functions/fanout"
	"github.com/loupe-dev/loupe/functions/internal/loupetest"
)

// notes are the notifications of a user, as plain data by id.
func notes(t *testing.T, db *firestore.Client, uid string) map[string]map[string]any {
	t.Helper()
	docs, err := db.Collection("notifications").Where("userId", "==", uid).Documents(context.Background()).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, d := range docs {
		out[d.Ref.ID] = d.Data()
	}
	return out
}

// only is the one notification of a user; the test fails when there are others.
func only(t *testing.T, db *firestore.Client, uid string) map[string]any {
	t.Helper()
	all := notes(t, db, uid)
	if len(all) != 1 {
		t.Fatalf("%s has %d notifications, want 1: %v", uid, len(all), all)
	}
	for _, n := range all {
		return n
	}
	return nil
}

// thread seeds a request of Sam's to Maya and returns a function that
// stores a comment of Maya's at a time and delivers its created event.
func thread(t *testing.T, h *fanout.Handler, db *firestore.Client, request string) func(id string, at time.Time, content string) {
	ctx := context.Background()
	if _, err := db.Collection("feedbackRequests").Doc(request).Set(ctx, map[string]any{"mentorId": "maya", "requesterId": "sam",
		"mentorName": "Maya Chen", "requesterName": "Sam Taylor", "title": "Solo on Autumn Leaves"}); err != nil {
		t.Fatal(err)
	}
	return func(id string, at time.Time, content string) {
		t.Helper()
		fields := map[string]any{"userId": "maya", "content": content, "timestamp": at, "deleted": false, "isReply": false}
		if _, err := db.Collection("feedbackRequests").Doc(request).Collection("comments").Doc(id).Set(ctx, fields); err != nil {
			t.Fatal(err)
		}
		if err := h.HandleComment(ctx, loupetest.Event("created-"+id, "feedbackRequests/"+request+"/comments/"+id, nil, fields)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHandleComment_Batches: a mentor's comments on one request within a
// few minutes become one notification that counts them and quotes the
// latest; a redelivered event changes nothing; a comment after the window,
// or after the requester read the notification, starts a new one.
func TestHandleComment_Batches(t *testing.T) {
	ctx := context.Background()
	l := loupetest.Start(t)
	h := &fanout.Handler{DB: l.Firestore}
	comment := thread(t, h, l.Firestore, "r1")
	start := time.Now().Add(-time.Hour)
	comment("c1", start, "Great tone from the first note.")
	n := only(t, l.Firestore, "sam")
	if n["title"] != "Maya Chen left feedback" || n["message"] != "“Great tone from the first note.”" || n["link"] != "/requests/r1" {
		t.Errorf("one comment: %v", n)
	}
	comment("c2", start.Add(2*time.Minute), "Rushing here.")
	comment("c3", start.Add(4*time.Minute), "Watch the slide into the bridge.")
	n = only(t, l.Firestore, "sam")
	data := n["data"].(map[string]any)
	if n["title"] != "Maya Chen left 3 comments" || n["message"] != "On “Solo on Autumn Leaves”. Latest: “Watch the slide into the bridge.”" ||
		data["count"] != int64(3) || data["commentId"] != "c3" || len(data["commentIds"].([]any)) != 3 {
		t.Errorf("three comments: %v", n)
	}

	// Eventarc delivers at least once: the same events again change nothing.
	for _, id := range []string{"c1", "c2", "c3"} {
		fields := map[string]any{"userId": "maya", "content": "x", "timestamp": start, "deleted": false}
		if err := h.HandleComment(ctx, loupetest.Event("created-"+id, "feedbackRequests/r1/comments/"+id, nil, fields)); err != nil {
			t.Fatal(err)
		}
	}
	if again := only(t, l.Firestore, "sam"); again["data"].(map[string]any)["count"] != int64(3) {
		t.Errorf("after redelivery: %v", again)
	}

	// Ten minutes later: a new notification. Once read, the next comment starts another.
	comment("c4", start.Add(14*time.Minute), "New section.")
	if all := notes(t, l.Firestore, "sam"); len(all) != 2 {
		t.Fatalf("after the window: %d notifications", len(all))
	}
	if _, err := l.Firestore.Collection("notifications").Doc("evt-created-c4").Update(ctx, []firestore.Update{{Path: "read", Value: true}}); err != nil {
		t.Fatal(err)
	}
	comment("c5", start.Add(15*time.Minute), "And this.")
	if all := notes(t, l.Firestore, "sam"); len(all) != 3 || all["evt-created-c5"]["title"] != "Maya Chen left feedback" {
		t.Errorf("after reading: %v", all)
	}
}

// TestHandleComment_ConcurrentDeliveries: comments delivered at the same
// time (Eventarc does not serialise them) still make one notification that
// counts each once.
func TestHandleComment_ConcurrentDeliveries(t *testing.T) {
	l := loupetest.Start(t)
	h := &fanout.Handler{DB: l.Firestore}
	comment := thread(t, h, l.Firestore, "r2")
	at := time.Now()
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			comment(fmt.Sprintf("k%d", i), at.Add(time.Duration(i)*time.Second), fmt.Sprintf("Note %d", i))
		})
	}
	wg.Wait()
	n := only(t, l.Firestore, "sam")
	if data := n["data"].(map[string]any); data["count"] != int64(6) || len(data["commentIds"].([]any)) != 6 {
		t.Errorf("six concurrent comments: %v", n)
	}
}

// TestHandleCommentUpdate_Redacts: deleting a comment makes the
// notification quoting it read [Deleted]; other notifications keep theirs.
func TestHandleCommentUpdate_Redacts(t *testing.T) {
	ctx := context.Background()
	l := loupetest.Start(t)
	h := &fanout.Handler{DB: l.Firestore}
	comment := thread(t, h, l.Firestore, "r3")
	at := time.Now()
	comment("d1", at, "Keep this one.")
	comment("d2", at.Add(10*time.Minute), "Oops, wrong take.")
	before := map[string]any{"userId": "maya", "content": "Oops, wrong take.", "deleted": false}
	after := map[string]any{"userId": "maya", "content": fanout.DeletedText, "deleted": true}
	for range 2 { // and once more, as a redelivery
		if err := h.HandleCommentUpdate(ctx, loupetest.Event("deleted-d2", "feedbackRequests/r3/comments/d2", before, after)); err != nil {
			t.Fatal(err)
		}
	}
	all := notes(t, l.Firestore, "sam")
	if all["evt-created-d2"]["message"] != "[Deleted]" || all["evt-created-d1"]["message"] != "“Keep this one.”" {
		t.Errorf("after deleting d2: %v", all)
	}
	// A comment deleted before its created event arrives is quoted as deleted.
	fields := map[string]any{"userId": "maya", "content": fanout.DeletedText, "timestamp": at.Add(30 * time.Minute), "deleted": true}
	if _, err := l.Firestore.Collection("feedbackRequests").Doc("r3").Collection("comments").Doc("d3").Set(ctx, fields); err != nil {
		t.Fatal(err)
	}
	created := map[string]any{"userId": "maya", "content": "Secret", "timestamp": at.Add(30 * time.Minute), "deleted": false}
	if err := h.HandleComment(ctx, loupetest.Event("created-d3", "feedbackRequests/r3/comments/d3", nil, created)); err != nil {
		t.Fatal(err)
	}
	if got := notes(t, l.Firestore, "sam")["evt-created-d3"]["message"]; got != "[Deleted]" {
		t.Errorf("a late event of a deleted comment quotes %q", got)
	}
}

// TestHandleRequest_PaymentInThePayersCurrency: payment_received says what
// was charged, in the currency it was charged in.
func TestHandleRequest_PaymentInThePayersCurrency(t *testing.T) {
	ctx := context.Background()
	l := loupetest.Start(t)
	h := &fanout.Handler{DB: l.Firestore}
	if _, err := l.Firestore.Collection("payments").Doc("pi_1").Set(ctx, map[string]any{"amount": 3897, "currency": "EUR"}); err != nil {
		t.Fatal(err)
	}
	r := map[string]any{"mentorId": "maya", "requesterName": "Lena Vogel", "title": "Bridge voicings", "paymentStatus": "unpaid"}
	paid := map[string]any{"mentorId": "maya", "requesterName": "Lena Vogel", "title": "Bridge voicings", "paymentStatus": "paid", "paymentId": "pi_1"}
	if err := h.HandleRequest(ctx, loupetest.Event("paid-1", "feedbackRequests/r4", r, paid)); err != nil {
		t.Fatal(err)
	}
	n := only(t, l.Firestore, "maya")
	if n["type"] != "payment_received" || n["message"] != "Lena Vogel paid €38.97 for “Bridge voicings”." {
		t.Errorf("payment_received: %v", n)
	}
}

// TestHandleRequest_Accepted tells the requester when the mentor accepts.
func TestHandleRequest_Accepted(t *testing.T) {
	ctx := context.Background()
	l := loupetest.Start(t)
	h := &fanout.Handler{DB: l.Firestore}
	r := map[string]any{"mentorId": "maya", "requesterId": "sam", "mentorName": "Maya Chen", "title": "Bridge voicings", "status": "pending"}
	accepted := map[string]any{"mentorId": "maya", "requesterId": "sam", "mentorName": "Maya Chen", "title": "Bridge voicings", "status": "accepted"}
	if err := h.HandleRequest(ctx, loupetest.Event("accept-1", "feedbackRequests/r5", r, accepted)); err != nil {
		t.Fatal(err)
	}
	n := only(t, l.Firestore, "sam")
	if n["type"] != "feedback_accepted" || n["title"] != "Request accepted" ||
		n["message"] != "Maya Chen accepted “Bridge voicings” and is working on it." || n["link"] != "/requests/r5" {
		t.Errorf("feedback_accepted: %v", n)
	}
}

// TestHandleRequest_NewVersion tells the mentor when the requester uploads
// a new version, linking to it; other changes of the count say nothing.
func TestHandleRequest_NewVersion(t *testing.T) {
	ctx := context.Background()
	l := loupetest.Start(t)
	h := &fanout.Handler{DB: l.Firestore}
	r := map[string]any{"mentorId": "maya", "requesterId": "sam", "requesterName": "Sam Taylor", "title": "Bridge voicings", "status": "accepted"}
	v2 := map[string]any{"mentorId": "maya", "requesterId": "sam", "requesterName": "Sam Taylor", "title": "Bridge voicings", "status": "accepted", "versionCount": int64(2)}
	if err := h.HandleRequest(ctx, loupetest.Event("version-2", "feedbackRequests/r6", r, v2)); err != nil {
		t.Fatal(err)
	}
	n := only(t, l.Firestore, "maya")
	if n["type"] != "feedback_request" || n["title"] != "New version" ||
		n["message"] != "Sam Taylor uploaded v2 of “Bridge voicings”." || n["link"] != "/requests/r6?v=2" {
		t.Errorf("new version: %v", n)
	}
}

// TestHandleComment_CarriedForward: a comment carried forward to a new
// version is the old feedback again, so the requester is not notified.
func TestHandleComment_CarriedForward(t *testing.T) {
	ctx := context.Background()
	l := loupetest.Start(t)
	h := &fanout.Handler{DB: l.Firestore}
	if _, err := l.Firestore.Collection("feedbackRequests").Doc("r7").Set(ctx, map[string]any{"mentorId": "maya", "requesterId": "sam", "title": "t"}); err != nil {
		t.Fatal(err)
	}
	copied := map[string]any{"userId": "maya", "content": "Rushes here", "isReply": false, "version": int64(2), "carriedFrom": "c1"}
	if err := h.HandleComment(ctx, loupetest.Event("created-c9", "feedbackRequests/r7/comments/c9", nil, copied)); err != nil {
		t.Fatal(err)
	}
	if got := notes(t, l.Firestore, "sam"); len(got) != 0 {
		t.Errorf("carried comment notified the requester: %v", got)
	}
}

// TestSweep reminds a mentor a day before a paid request is due and, once
// it is overdue, tells both sides; sweeping again sends nothing twice, and
// unpaid or finished requests are left alone.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	l := loupetest.Start(t)
	h := &fanout.Handler{DB: l.Firestore}
	now := time.Now()
	for id, r := range map[string]map[string]any{
		"late":   {"status": "accepted", "paymentStatus": "paid", "dueAt": now.Add(-time.Hour)},
		"soon":   {"status": "pending", "paymentStatus": "paid", "dueAt": now.Add(12 * time.Hour)},
		"later":  {"status": "accepted", "paymentStatus": "paid", "dueAt": now.Add(72 * time.Hour)},
		"unpaid": {"status": "pending", "paymentStatus": "unpaid", "dueAt": now.Add(-time.Hour)},
		"done":   {"status": "completed", "paymentStatus": "paid", "dueAt": now.Add(-time.Hour)},
	} {
		r["mentorId"], r["requesterId"], r["mentorName"], r["requesterName"], r["title"] = "maya", "sam", "Maya Chen", "Sam Taylor", id
		if _, err := l.Firestore.Collection("feedbackRequests").Doc(id).Set(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := h.Sweep(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	sam, maya := notes(t, l.Firestore, "sam"), notes(t, l.Firestore, "maya")
	if len(sam) != 1 || sam["overdue-late"]["message"] != "Maya Chen has not sent feedback on “late” by the promised date. You can cancel the request for a full refund." {
		t.Errorf("Sam's reminders: %v", sam)
	}
	if len(maya) != 2 || maya["overdue-mentor-late"] == nil || maya["due-soon-soon"]["message"] != "Your feedback on “soon” for Sam Taylor is due within a day." {
		t.Errorf("Maya's reminders: %v", maya)
	}
}
