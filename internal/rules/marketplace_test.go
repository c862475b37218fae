package rules

import (
	"os"
	"strings"
	"testing"
)

func loadRules(t *testing.T, name string) *Ruleset {
	t.Helper()
	src, err := os.ReadFile("../../" + name)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Compile(string(src), name)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func merged(base map[string]any, changes map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range changes {
		if v == deleteField {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

type deleteMarker struct{}

var deleteField = deleteMarker{}

// TestMarketplace_FirestoreRules judges every collection of firestore.rules with allowed and denied cases.
func TestMarketplace_FirestoreRules(t *testing.T) {
	rs := loadRules(t, "firestore.rules")
	alice, bob, carol := user("alice"), user("bob"), user("carol")
	admin := &Auth{UID: "root", Token: map[string]any{"role": "admin"}}
	profile := map[string]any{"name": "Alice", "role": "user", "stripeConnected": false, "bio": "x"}
	notif := map[string]any{"userId": "alice", "type": "feedback_request", "title": "t", "message": "m", "data": map[string]any{}, "read": false, "createdAt": testTime}
	card := map[string]any{"duration": "15 min", "price": int64(40)}
	fr := map[string]any{"requesterId": "alice", "mentorId": "bob", "status": "pending", "paymentStatus": "unpaid", "title": "t", "rateCard": card, "updatedAt": testTime}
	paid := merged(fr, map[string]any{"paymentStatus": "paid"})
	frWith := func(status string) map[string]any { return merged(fr, map[string]any{"status": status}) }
	comment := map[string]any{"userId": "alice", "content": "hello", "mediaUrl": "https://x/y.png", "mediaType": "image", "deleted": false, "repliesCount": int64(0), "isReply": false}
	softDeleted := merged(comment, map[string]any{"deleted": true, "content": "[Deleted]", "mediaUrl": nil})
	docs := memDocs{before: map[string]map[string]any{db + "feedbackRequests/fr1": fr, db + "mentors/bob": {"bookable": true, "rateCards": []any{card}}, db + "mentors/carol": {"bookable": false}}}
	upd := func(rel string, auth *Auth, before, changes map[string]any) *Request {
		return fsReq(Update, rel, auth, before, merged(before, changes))
	}
	list := func(coll string, auth *Auth, filters ...Filter) *Request {
		r := fsReq(List, coll, auth, nil, nil)
		r.Query = &Query{Filters: filters}
		return r
	}
	tests := []struct {
		name  string
		req   *Request
		allow bool
	}{
		{"users: owner read", fsReq(Get, "users/alice", alice, profile, nil), true},
		{"users: another user reads a private profile", fsReq(Get, "users/alice", bob, profile, nil), false},
		{"users: anonymous read", fsReq(Get, "users/alice", nil, profile, nil), false},
		{"users: list of profiles", list("users", bob), false},
		{"users: owner create", fsReq(Create, "users/alice", alice, nil, map[string]any{"name": "A", "role": "user"}), true},
		{"users: owner create without role", fsReq(Create, "users/alice", alice, nil, map[string]any{"name": "A"}), true},
		{"users: create as admin", fsReq(Create, "users/alice", alice, nil, map[string]any{"name": "A", "role": "admin"}), false},
		{"users: create with stripe", fsReq(Create, "users/alice", alice, nil, map[string]any{"name": "A", "stripeConnected": true}), false},
		{"users: create for another", fsReq(Create, "users/bob", alice, nil, map[string]any{"name": "B"}), false},
		{"users: owner update bio", upd("users/alice", alice, profile, map[string]any{"bio": "new"}), true},
		{"users: owner sets role", upd("users/alice", alice, profile, map[string]any{"role": "admin"}), false},
		{"users: owner removes role", upd("users/alice", alice, profile, map[string]any{"role": deleteField}), false},
		{"users: owner sets stripe", upd("users/alice", alice, profile, map[string]any{"stripeConnected": true}), false},
		{"users: other updates", upd("users/alice", bob, profile, map[string]any{"bio": "hacked"}), false},
		{"users: delete", fsReq(Delete, "users/alice", alice, profile, nil), false},

		{"notifications: owner get", fsReq(Get, "notifications/n1", alice, notif, nil), true},
		{"notifications: other get", fsReq(Get, "notifications/n1", bob, notif, nil), false},
		{"notifications: owner list by userId", list("notifications", alice, Filter{"userId", "==", "alice"}), true},
		{"notifications: list of another's", list("notifications", bob, Filter{"userId", "==", "alice"}), false},
		{"notifications: unfiltered list", list("notifications", alice), false},
		{"notifications: mark read", upd("notifications/n1", alice, notif, map[string]any{"read": true}), true},
		{"notifications: mark unread", upd("notifications/n1", alice, merged(notif, map[string]any{"read": true}), map[string]any{"read": false}), false},
		{"notifications: change title", upd("notifications/n1", alice, notif, map[string]any{"read": true, "title": "x"}), false},
		{"notifications: other marks read", upd("notifications/n1", bob, notif, map[string]any{"read": true}), false},
		{"notifications: create for self", fsReq(Create, "notifications/n2", alice, nil, notif), true},
		{"notifications: create for other", fsReq(Create, "notifications/n2", bob, nil, notif), false},
		{"notifications: anonymous create", fsReq(Create, "notifications/n2", nil, nil, notif), false},
		{"notifications: delete", fsReq(Delete, "notifications/n1", alice, notif, nil), false},

		{"categories: anonymous read", fsReq(Get, "categories/c1", nil, map[string]any{"name": "Music"}, nil), true},
		{"categories: anonymous list", list("categories", nil), true},
		{"categories: admin create", fsReq(Create, "categories/c2", admin, nil, map[string]any{"name": "Art"}), true},
		{"categories: admin delete", fsReq(Delete, "categories/c2", admin, map[string]any{"name": "Art"}, nil), true},
		{"categories: user create", fsReq(Create, "categories/c2", alice, nil, map[string]any{"name": "Art"}), false},
		{"categories: anonymous update", upd("categories/c1", nil, map[string]any{"name": "Music"}, map[string]any{"name": "x"}), false},

		{"requests: requester get", fsReq(Get, "feedbackRequests/fr1", alice, fr, nil), true},
		{"requests: mentor get", fsReq(Get, "feedbackRequests/fr1", bob, fr, nil), true},
		{"requests: stranger get", fsReq(Get, "feedbackRequests/fr1", carol, fr, nil), false},
		{"requests: requester list", list("feedbackRequests", alice, Filter{"requesterId", "==", "alice"}), true},
		{"requests: mentor list", list("feedbackRequests", bob, Filter{"mentorId", "==", "bob"}), true},
		{"requests: unfiltered list", list("feedbackRequests", alice), false},
		{"requests: create pending", fsReq(Create, "feedbackRequests/fr2", alice, nil, fr), true},
		{"requests: create on a card the mentor does not list", fsReq(Create, "feedbackRequests/fr2", alice, nil, merged(fr, map[string]any{"rateCard": map[string]any{"duration": "15 min", "price": int64(1)}})), false},
		{"requests: create paid", fsReq(Create, "feedbackRequests/fr2", alice, nil, paid), false},
		{"requests: create for a mentor not bookable", fsReq(Create, "feedbackRequests/fr2", alice, nil, merged(fr, map[string]any{"mentorId": "carol"})), false},
		{"requests: create accepted", fsReq(Create, "feedbackRequests/fr2", alice, nil, frWith("accepted")), false},
		{"requests: create for other requester", fsReq(Create, "feedbackRequests/fr2", bob, nil, fr), false},
		{"requests: mentor accepts a paid request", upd("feedbackRequests/fr1", bob, paid, map[string]any{"status": "accepted", "updatedAt": testTime}), true},
		{"requests: mentor accepts an unpaid request", upd("feedbackRequests/fr1", bob, fr, map[string]any{"status": "accepted", "updatedAt": testTime}), false},
		{"requests: mentor declines", upd("feedbackRequests/fr1", bob, fr, map[string]any{"status": "declined"}), true},
		{"requests: mentor completes accepted", upd("feedbackRequests/fr1", bob, frWith("accepted"), map[string]any{"status": "completed"}), true},
		{"requests: mentor completes pending", upd("feedbackRequests/fr1", bob, fr, map[string]any{"status": "completed"}), false},
		{"requests: mentor cancels", upd("feedbackRequests/fr1", bob, fr, map[string]any{"status": "cancelled"}), false},
		{"requests: mentor accepts and reprices", upd("feedbackRequests/fr1", bob, paid, map[string]any{"status": "accepted", "title": "x"}), false},
		{"requests: requester cancels", upd("feedbackRequests/fr1", alice, fr, map[string]any{"status": "cancelled"}), true},
		{"requests: requester accepts", upd("feedbackRequests/fr1", alice, fr, map[string]any{"status": "accepted"}), false},
		{"requests: requester cancels accepted", upd("feedbackRequests/fr1", alice, frWith("accepted"), map[string]any{"status": "cancelled"}), false},
		{"requests: stranger cancels", upd("feedbackRequests/fr1", carol, fr, map[string]any{"status": "cancelled"}), false},
		{"requests: delete", fsReq(Delete, "feedbackRequests/fr1", alice, fr, nil), false},

		{"comments: requester reads", fsReq(Get, "feedbackRequests/fr1/comments/c1", alice, comment, nil), true},
		{"comments: mentor lists", list("feedbackRequests/fr1/comments", bob, Filter{"isReply", "==", false}), true},
		{"comments: stranger lists", list("feedbackRequests/fr1/comments", carol), false},
		{"comments: comments of missing request", fsReq(Get, "feedbackRequests/nope/comments/c1", alice, comment, nil), false},
		{"comments: requester creates", fsReq(Create, "feedbackRequests/fr1/comments/c2", alice, nil, comment), true},
		{"comments: mentor creates", fsReq(Create, "feedbackRequests/fr1/comments/c2", bob, nil, merged(comment, map[string]any{"userId": "bob"})), true},
		{"comments: stranger creates", fsReq(Create, "feedbackRequests/fr1/comments/c2", carol, nil, merged(comment, map[string]any{"userId": "carol"})), false},
		{"comments: create as another user", fsReq(Create, "feedbackRequests/fr1/comments/c2", bob, nil, comment), false},
		{"comments: create deleted", fsReq(Create, "feedbackRequests/fr1/comments/c2", alice, nil, merged(comment, map[string]any{"deleted": true})), false},
		{"comments: create with replies", fsReq(Create, "feedbackRequests/fr1/comments/c2", alice, nil, merged(comment, map[string]any{"repliesCount": int64(3)})), false},
		{"comments: create 5000 chars", fsReq(Create, "feedbackRequests/fr1/comments/c2", alice, nil, merged(comment, map[string]any{"content": strings.Repeat("x", 5000)})), true},
		{"comments: create 5001 chars", fsReq(Create, "feedbackRequests/fr1/comments/c2", alice, nil, merged(comment, map[string]any{"content": strings.Repeat("x", 5001)})), false},
		{"comments: author soft delete", fsReq(Update, "feedbackRequests/fr1/comments/c1", alice, comment, softDeleted), true},
		{"comments: soft delete with empty media", fsReq(Update, "feedbackRequests/fr1/comments/c1", alice, comment, merged(softDeleted, map[string]any{"mediaUrl": ""})), true},
		{"comments: soft delete keeping media", fsReq(Update, "feedbackRequests/fr1/comments/c1", alice, comment, merged(softDeleted, map[string]any{"mediaUrl": "https://x/y.png"})), false},
		{"comments: soft delete with other text", fsReq(Update, "feedbackRequests/fr1/comments/c1", alice, comment, merged(softDeleted, map[string]any{"content": "gone"})), false},
		{"comments: soft delete by mentor", fsReq(Update, "feedbackRequests/fr1/comments/c1", bob, comment, softDeleted), false},
		{"comments: author edits content", upd("feedbackRequests/fr1/comments/c1", alice, comment, map[string]any{"content": "edited"}), false},
		{"comments: client bumps repliesCount", upd("feedbackRequests/fr1/comments/c1", alice, comment, map[string]any{"repliesCount": int64(1)}), false},
		{"comments: soft delete touching repliesCount", fsReq(Update, "feedbackRequests/fr1/comments/c1", alice, comment, merged(softDeleted, map[string]any{"repliesCount": int64(1)})), false},
		{"comments: hard delete", fsReq(Delete, "feedbackRequests/fr1/comments/c1", alice, comment, nil), false},

		{"unknown collection", fsReq(Get, "secrets/s1", alice, map[string]any{}, nil), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Documents = docs
			d := rs.Evaluate(tc.req)
			if d.Allow != tc.allow {
				t.Fatalf("Allow = %v, want %v (%q)", d.Allow, tc.allow, d.Message)
			}
		})
	}
}

// TestMarketplace_StorageRules judges every path of storage.rules with allowed and denied cases.
func TestMarketplace_StorageRules(t *testing.T) {
	rs := loadRules(t, "storage.rules")
	alice, bob := user("alice"), user("bob")
	const mb = 1024 * 1024
	obj := func(size int64, ct string) map[string]any {
		return map[string]any{"size": size, "contentType": ct, "metadata": map[string]any{}}
	}
	up := func(name string, auth *Auth, size int64, ct string) *Request {
		return &Request{Service: Storage, Method: Create, Path: "/b/bkt/o/" + name, Auth: auth, RequestResource: obj(size, ct), Time: testTime}
	}
	req := func(m Method, name string, auth *Auth) *Request {
		return &Request{Service: Storage, Method: m, Path: "/b/bkt/o/" + name, Auth: auth, Resource: obj(10, "image/png"), Time: testTime}
	}
	tests := []struct {
		name  string
		req   *Request
		allow bool
	}{
		{"comments: upload own image", up("comments/fr1/alice_1700.png", alice, mb, "image/png"), true},
		{"comments: upload pdf", up("comments/fr1/alice_1700.pdf", alice, mb, "application/pdf"), true},
		{"comments: upload audio", up("comments/fr1/alice_1700.m4a", alice, mb, "audio/mp4"), true},
		{"comments: upload 100MB video", up("comments/fr1/alice_1700.mp4", alice, 100*mb, "video/mp4"), true},
		{"comments: upload too large", up("comments/fr1/alice_1700.mp4", alice, 100*mb+1, "video/mp4"), false},
		{"comments: upload zip", up("comments/fr1/alice_1700.zip", alice, mb, "application/zip"), false},
		{"comments: upload under another's uid", up("comments/fr1/bob_1700.png", alice, mb, "image/png"), false},
		{"comments: uid without underscore", up("comments/fr1/alice1700.png", alice, mb, "image/png"), false},
		{"comments: uid prefix of longer uid", up("comments/fr1/alicex_1.png", alice, mb, "image/png"), false},
		{"comments: anonymous upload", up("comments/fr1/alice_1700.png", nil, mb, "image/png"), false},
		{"comments: signed-in read", req(Get, "comments/fr1/alice_1700.png", bob), true},
		{"comments: anonymous read", req(Get, "comments/fr1/alice_1700.png", nil), false},
		{"comments: owner delete", req(Delete, "comments/fr1/alice_1700.png", alice), true},
		{"comments: other delete", req(Delete, "comments/fr1/alice_1700.png", bob), false},
		{"comments: nested path", up("comments/fr1/x/alice_1.png", alice, mb, "image/png"), false},

		{"videos: owner upload", up("videos/alice/intro.mp4", alice, 500*mb, "video/mp4"), true},
		{"videos: owner nested upload", up("videos/alice/fr1/take2.webm", alice, mb, "video/webm"), true},
		{"videos: 1GB limit", up("videos/alice/big.mp4", alice, 1024*mb+1, "video/mp4"), false},
		{"videos: image content", up("videos/alice/intro.png", alice, mb, "image/png"), false},
		{"videos: other's folder", up("videos/bob/intro.mp4", alice, mb, "video/mp4"), false},
		{"videos: signed-in read", req(Get, "videos/alice/intro.mp4", bob), true},
		{"videos: signed-in list", req(List, "videos/alice", bob), true},
		{"videos: anonymous read", req(Get, "videos/alice/intro.mp4", nil), false},
		{"videos: owner delete", req(Delete, "videos/alice/intro.mp4", alice), true},
		{"videos: other delete", req(Delete, "videos/alice/intro.mp4", bob), false},

		{"avatars: owner upload", up("avatars/alice/me.jpg", alice, 5*mb, "image/jpeg"), true},
		{"avatars: too large", up("avatars/alice/me.jpg", alice, 5*mb+1, "image/jpeg"), false},
		{"avatars: video", up("avatars/alice/me.mp4", alice, mb, "video/mp4"), false},
		{"avatars: other's folder", up("avatars/bob/me.jpg", alice, mb, "image/jpeg"), false},
		{"avatars: public read", req(Get, "avatars/alice/me.jpg", nil), true},
		{"avatars: owner metadata update", &Request{Service: Storage, Method: Update, Path: "/b/bkt/o/avatars/alice/me.jpg", Auth: alice, Resource: obj(10, "image/png"), RequestResource: obj(10, "image/png")}, true},
		{"avatars: anonymous delete", req(Delete, "avatars/alice/me.jpg", nil), false},

		{"unknown path", up("misc/alice.txt", alice, 1, "text/plain"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := rs.Evaluate(tc.req)
			if d.Allow != tc.allow {
				t.Fatalf("Allow = %v, want %v (%q)", d.Allow, tc.allow, d.Message)
			}
		})
	}
}
