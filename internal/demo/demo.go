// Package demo seeds a small, believable marketplace into a running loupe (or
// any Firebase project) through the Admin SDKs: mentors with categories and
// rate cards, requesters, feedback requests on a video, threaded comments at
// video timestamps, payments, reviews and notifications. What the profiles
// function derives from these (the public mentors/ projection and each
// mentor's gathered reviews) it writes itself: where the functions run,
// they do so as the seed writes; for `emulator-data/`, this seed exported,
// `make demo-data` runs the seed and then the function's own code over it
// (functions/profiles' TestDemoData -update).
//
// Every demo account signs in with the password "loupe-demo".
package demo

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/storage"
	"firebase.google.com/go/v4/auth"
	"github.com/loupe-dev/loupe/internal/marketplace"
)

// Password is the password of every demo account.
const Password = "loupe-demo"

//go:generate sh clips.sh

// The demo's clips, made by clips.sh from ffmpeg's sources.
var (
	//go:embed testdata/autumn-leaves-solo.mp4
	soloClip []byte
	//go:embed testdata/seed-pitch.mp4
	pitchClip []byte
)

// Clients are the Admin SDK clients the seed writes through.
type Clients struct {
	Auth      *auth.Client
	Firestore *firestore.Client
	Storage   *storage.Client
	// Bucket is the default bucket, e.g. demo-loupe.appspot.com.
	Bucket string
	// PublicURL is where the app is served, used in stored download URLs.
	PublicURL string
}

type person struct {
	uid, name, email, title, bio string
	mentor                       bool
	expertise, categories        []string
	rateCards                    []marketplace.RateCard
	workedWith                   string
	social                       marketplace.Social
}

var categories = []struct{ id, name, emoji string }{
	{"music", "Music", "🎸"},
	{"dance", "Dance", "💃"},
	{"filmmaking", "Filmmaking", "🎬"},
	{"public-speaking", "Public speaking", "🎤"},
	{"sports", "Sports", "🏀"},
	{"design", "Design", "🎨"},
}

var people = []person{
	{uid: "mentor-maya", name: "Maya Chen", email: "maya@loupe.dev", mentor: true,
		title:     "Session guitarist and jazz educator",
		bio:       "Fifteen years on stage and in studios. I help players tighten their timing and find their own voice in a solo.",
		expertise: []string{"Jazz guitar", "Improvisation", "Timing"}, categories: []string{"music"},
		workedWith: "Blue Note sessions, Berklee summer programme",
		social:     marketplace.Social{Instagram: "mayachenguitar"},
		rateCards:  []marketplace.RateCard{{Duration: "Up to 1 min", Price: 25}, {Duration: "1-3 mins", Price: 45}, {Duration: "3-5 mins", Price: 65}, {Duration: "5+ mins", Price: 90}}},
	{uid: "mentor-diego", name: "Diego Alvarez", email: "diego@loupe.dev", mentor: true,
		title:     "Choreographer, contemporary and hip-hop",
		bio:       "I have choreographed for tours and music videos. Send me a routine and I will show you where the energy drops.",
		expertise: []string{"Choreography", "Hip-hop", "Stage presence"}, categories: []string{"dance"},
		workedWith: "World of Dance, touring artists",
		social:     marketplace.Social{Instagram: "diegomoves", Twitter: "diegomoves"},
		rateCards:  marketplace.DefaultRateCards()},
	{uid: "mentor-priya", name: "Priya Raman", email: "priya@loupe.dev", mentor: true,
		title:     "Speaker coach, TEDx curator",
		bio:       "I coach founders and researchers to speak with clarity. Upload a talk rehearsal; I'll mark every moment that loses the room.",
		expertise: []string{"Keynotes", "Pitching", "Storytelling"}, categories: []string{"public-speaking"},
		workedWith: "TEDxAmsterdam, Y Combinator founders",
		social:     marketplace.Social{LinkedIn: "priyaraman"},
		rateCards:  []marketplace.RateCard{{Duration: "Up to 1 min", Price: 30}, {Duration: "1-3 mins", Price: 55}, {Duration: "3-5 mins", Price: 80}, {Duration: "5+ mins", Price: 120}}},
	{uid: "mentor-tom", name: "Tom Becker", email: "tom@loupe.dev", mentor: true,
		title:     "Documentary editor and colourist",
		bio:       "Cutting documentaries for broadcast for a decade. I review pacing, structure and grade, shot by shot.",
		expertise: []string{"Editing", "Pacing", "Colour grading"}, categories: []string{"filmmaking", "design"},
		workedWith: "BBC Storyville, Sundance shorts",
		rateCards:  marketplace.DefaultRateCards()},
	{uid: "mentor-aisha", name: "Aisha Bello", email: "aisha@loupe.dev", mentor: true,
		title:     "Basketball skills coach",
		bio:       "Former pro guard. Film study is how players improve fastest; send me game footage or drills.",
		expertise: []string{"Shooting form", "Footwork", "Game IQ"}, categories: []string{"sports"},
		workedWith: "NCAA Division I programmes",
		social:     marketplace.Social{Twitter: "coachaisha"},
		rateCards:  []marketplace.RateCard{{Duration: "Up to 1 min", Price: 15}, {Duration: "1-3 mins", Price: 30}, {Duration: "3-5 mins", Price: 45}, {Duration: "5+ mins", Price: 70}}},
	{uid: "user-sam", name: "Sam Taylor", email: "sam@loupe.dev", title: "Guitarist, working on jazz standards",
		expertise: []string{"Guitar"}, rateCards: marketplace.DefaultRateCards()},
	{uid: "user-alex", name: "Alex Kim", email: "alex@loupe.dev", title: "Startup founder",
		expertise: []string{"Pitching"}, rateCards: marketplace.DefaultRateCards()},
}

// Seed writes the demo marketplace. now anchors every timestamp.
func Seed(ctx context.Context, c Clients, now time.Time) error {
	for _, p := range people {
		if err := seedPerson(ctx, c, p, now); err != nil {
			return err
		}
	}
	for _, cat := range categories {
		if _, err := c.Firestore.Collection(marketplace.Categories).Doc(cat.id).Set(ctx, map[string]any{"name": cat.name, "emoji": cat.emoji}); err != nil {
			return fmt.Errorf("category %s: %w", cat.id, err)
		}
	}
	videoPath := "videos/user-sam/autumn-leaves-solo.mp4"
	videoURL, err := upload(ctx, c, videoPath, "video/mp4", "demo-autumn-leaves", soloClip)
	if err != nil {
		return err
	}
	pitchPath := "videos/user-alex/seed-pitch.mp4"
	pitchURL, err := upload(ctx, c, pitchPath, "video/mp4", "demo-seed-pitch", pitchClip)
	if err != nil {
		return err
	}
	requests := []map[string]any{
		request("req-autumn-leaves", "user-sam", "mentor-maya", "Solo on Autumn Leaves: is my timing rushed?",
			"Second chorus of my solo. I feel like I rush the eighth notes going into the bridge. Honest feedback welcome!",
			videoPath, videoURL, marketplace.RateCard{Duration: "1-3 mins", Price: 45}, "accepted", "paid", now.Add(-50*time.Hour)),
		request("req-seed-pitch", "user-alex", "mentor-priya", "Seed pitch rehearsal",
			"Three-minute pitch for demo day. Does the opening hook land?",
			pitchPath, pitchURL, marketplace.RateCard{Duration: "3-5 mins", Price: 80}, "pending", "unpaid", now.Add(-3*time.Hour)),
		request("req-autumn-leaves-take2", "user-sam", "mentor-maya", "Take two, after your notes",
			"Slowed the metronome as you suggested. Better?",
			videoPath, videoURL, marketplace.RateCard{Duration: "Up to 1 min", Price: 25}, "completed", "paid", now.Add(-30*24*time.Hour)),
		request("req-investor-update", "user-alex", "mentor-priya", "Investor update, first five minutes",
			"Quarterly update to our angels. I tend to bury the numbers.",
			pitchPath, pitchURL, marketplace.RateCard{Duration: "1-3 mins", Price: 55}, "completed", "paid", now.Add(-20*24*time.Hour)),
		request("req-stage-set", "user-sam", "mentor-diego", "Moving on stage during my set",
			"I freeze behind the mic stand. How do I use the stage without missing notes?",
			videoPath, videoURL, marketplace.RateCard{Duration: "1-3 mins", Price: 35}, "completed", "paid", now.Add(-12*24*time.Hour)),
	}
	for _, r := range requests {
		if r["paymentStatus"] == "paid" {
			if err := seedPayment(ctx, c, r); err != nil {
				return err
			}
		}
		if _, err := c.Firestore.Collection(marketplace.FeedbackRequests).Doc(r["id"].(string)).Set(ctx, withoutID(r)); err != nil {
			return fmt.Errorf("request %s: %w", r["id"], err)
		}
	}
	if err := seedThread(ctx, c, now); err != nil {
		return err
	}
	if err := seedReviews(ctx, c, now); err != nil {
		return err
	}
	return seedNotifications(ctx, c, now)
}

// seedPayment records a paid request's payment as the payments function
// would (without a receipt: the local Stripe stand-in never saw it).
func seedPayment(ctx context.Context, c Clients, r map[string]any) error {
	id := "pi_demo_" + r["id"].(string)
	r["paymentId"] = id
	cents := int64(r["rateCard"].(map[string]any)["price"].(float64) * 100)
	_, err := c.Firestore.Collection("payments").Doc(id).Set(ctx, map[string]any{
		"requestId": r["id"], "mentorId": r["mentorId"], "requesterId": r["requesterId"], "amount": cents,
		"currency": "USD", "stripeEventId": "", "receiptUrl": "", "createdAt": r["createdAt"].(time.Time).Add(10 * time.Minute)})
	if err != nil {
		return fmt.Errorf("payment %s: %w", id, err)
	}
	return nil
}

// seedReviews writes the requesters' reviews of completed requests.
func seedReviews(ctx context.Context, c Clients, now time.Time) error {
	reviews := []struct {
		request, requester, mentor, text string
		rating                           int64
		age                              time.Duration
	}{
		{"req-autumn-leaves-take2", "user-sam", "mentor-maya", "Maya heard the rush before I did and gave me a drill that fixed it in a week. Worth every cent.", 5, 28 * 24 * time.Hour},
		{"req-investor-update", "user-alex", "mentor-priya", "Priya marked the exact second I lost the room. Our next update landed.", 5, 18 * 24 * time.Hour},
		{"req-stage-set", "user-sam", "mentor-diego", "Great notes on moving with the band; I wanted a bit more on the quiet songs.", 4, 10 * 24 * time.Hour},
	}
	for _, r := range reviews {
		doc := map[string]any{"requesterId": r.requester, "mentorId": r.mentor, "reviewerName": nameOf(r.requester),
			"rating": r.rating, "text": r.text, "createdAt": now.Add(-r.age)}
		if _, err := c.Firestore.Collection("reviews").Doc(r.request).Set(ctx, doc); err != nil {
			return fmt.Errorf("review %s: %w", r.request, err)
		}
	}
	return nil
}

func seedPerson(ctx context.Context, c Clients, p person, now time.Time) error {
	u := (&auth.UserToCreate{}).UID(p.uid).Email(p.email).Password(Password).DisplayName(p.name).EmailVerified(true)
	if _, err := c.Auth.CreateUser(ctx, u); err != nil && !auth.IsUIDAlreadyExists(err) {
		return fmt.Errorf("user %s: %w", p.uid, err)
	}
	profile := marketplace.NewProfile(p.uid, p.email, p.name, now)
	profile.Title, profile.Bio = p.title, p.bio
	profile.Expertise, profile.TaxonomySelections = nonNil(p.expertise), nonNil(p.categories)
	profile.PreviouslyWorkedWith, profile.Social = p.workedWith, p.social
	profile.RateCards, profile.IsMentor = p.rateCards, p.mentor
	profile.StripeConnected = p.mentor && p.uid != "mentor-tom"
	if _, err := c.Firestore.Collection(marketplace.Users).Doc(p.uid).Set(ctx, profile); err != nil {
		return fmt.Errorf("profile %s: %w", p.uid, err)
	}
	return nil
}

func request(id, requester, mentor, title, description, videoPath, videoURL string, card marketplace.RateCard, status, payment string, created time.Time) map[string]any {
	return map[string]any{
		"id": id, "requesterId": requester, "mentorId": mentor,
		"requesterName": nameOf(requester), "mentorName": nameOf(mentor),
		"title": title, "description": description, "videoPath": videoPath, "videoUrl": videoURL,
		"rateCard": map[string]any{"duration": card.Duration, "price": card.Price}, "currency": "USD",
		"status": status, "paymentStatus": payment, "createdAt": created, "updatedAt": created.Add(time.Hour),
	}
}

// comment is one demo comment; replies point at their parent by key.
type comment struct {
	key, author, content, parent string
	at                           float64 // video seconds
	after                        time.Duration
}

func seedThread(ctx context.Context, c Clients, now time.Time) error {
	thread := []comment{
		{key: "c1", author: "mentor-maya", at: 1.5, after: 0, content: "Great tone from the first note. Notice how you lean into the downbeat here: keep that."},
		{key: "c2", author: "mentor-maya", at: 3, after: time.Minute, content: "Here is the rush you mentioned: the eighth notes creep ahead of the click by about a sixteenth. Try practising this phrase at 80 bpm with the metronome on 2 and 4."},
		{key: "r1", author: "user-sam", parent: "c2", at: 3, after: 2 * time.Hour, content: "Oh wow, I hear it now. Is it the pickup or the whole phrase?"},
		{key: "r2", author: "mentor-maya", parent: "c2", at: 3, after: 3 * time.Hour, content: "Mostly the pickup. Land the first note of the bar late on purpose a few times; it resets your feel."},
		{key: "c3", author: "mentor-maya", at: 6.25, after: 2 * time.Minute, content: "Lovely resolution. Hold the last note a beat longer and let it ring."},
		{key: "c4", author: "user-sam", at: 7, after: 4 * time.Hour, content: "Thank you! Recording take two this weekend."},
	}
	base := now.Add(-48 * time.Hour)
	col := c.Firestore.Collection(marketplace.FeedbackRequests).Doc("req-autumn-leaves").Collection(marketplace.Comments)
	replies := map[string]int{}
	for _, cm := range thread {
		if cm.parent != "" {
			replies[cm.parent]++
		}
	}
	for _, cm := range thread {
		doc := map[string]any{
			"userId": cm.author, "userDisplayName": nameOf(cm.author), "userProfilePicture": nil,
			"content": cm.content, "mediaUrl": "", "mediaType": "text",
			"timestamp": base.Add(cm.after), "videoTimestamp": cm.at,
			"isReply": cm.parent != "", "repliesCount": replies[cm.key], "deleted": false,
		}
		if cm.parent != "" {
			doc["parentCommentId"] = cm.parent
		}
		if _, err := col.Doc(cm.key).Set(ctx, doc); err != nil {
			return fmt.Errorf("comment %s: %w", cm.key, err)
		}
	}
	return nil
}

func seedNotifications(ctx context.Context, c Clients, now time.Time) error {
	notes := []struct {
		id, user, kind, title, message, link string
		age                                  time.Duration
		read                                 bool
	}{
		{"n-sam-1", "user-sam", "feedback_received", "Maya Chen left feedback", "“Here is the rush you mentioned: the eighth notes creep ahead of the click…”", "/requests/req-autumn-leaves", 47 * time.Hour, false},
		{"n-sam-2", "user-sam", "feedback_received", "Maya Chen replied to you", "“Mostly the pickup. Land the first note of the bar late on purpose…”", "/requests/req-autumn-leaves", 45 * time.Hour, false},
		{"n-sam-3", "user-sam", "feedback_received", "Feedback completed", "Maya Chen marked “Take two, after your notes” as completed.", "/requests/req-autumn-leaves-take2", 29 * 24 * time.Hour, true},
		{"n-maya-1", "mentor-maya", "feedback_request", "New feedback request", "Sam Taylor asked for feedback on “Solo on Autumn Leaves: is my timing rushed?”", "/requests/req-autumn-leaves", 50 * time.Hour, true},
		{"n-maya-2", "mentor-maya", "payment_received", "Payment received", "Sam Taylor paid $45.00 for “Solo on Autumn Leaves: is my timing rushed?”", "/requests/req-autumn-leaves", 49 * time.Hour, false},
		{"n-priya-1", "mentor-priya", "feedback_request", "New feedback request", "Alex Kim asked for feedback on “Seed pitch rehearsal”", "/requests/req-seed-pitch", 3 * time.Hour, false},
	}
	for _, n := range notes {
		doc := map[string]any{
			"userId": n.user, "type": n.kind, "title": n.title, "message": n.message,
			"data": map[string]any{}, "read": n.read, "createdAt": now.Add(-n.age), "link": n.link,
		}
		if _, err := c.Firestore.Collection(marketplace.Notifications).Doc(n.id).Set(ctx, doc); err != nil {
			return fmt.Errorf("notification %s: %w", n.id, err)
		}
	}
	return nil
}

// upload stores an object with a fixed download token and returns its
// download URL, as getDownloadURL would build it.
func upload(ctx context.Context, c Clients, path, contentType, token string, data []byte) (string, error) {
	w := c.Storage.Bucket(c.Bucket).Object(path).NewWriter(ctx)
	w.ContentType = contentType
	w.Metadata = map[string]string{"firebaseStorageDownloadTokens": token}
	if _, err := bytes.NewReader(data).WriteTo(w); err != nil {
		return "", fmt.Errorf("upload %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("upload %s: %w", path, err)
	}
	return fmt.Sprintf("%s/v0/b/%s/o/%s?alt=media&token=%s", c.PublicURL, c.Bucket, url.PathEscape(path), token), nil
}

func nameOf(uid string) string {
	for _, p := range people {
		if p.uid == uid {
			return p.name
		}
	}
	return uid
}

func withoutID(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != "id" {
			out[k] = v
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
