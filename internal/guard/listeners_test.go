package guard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const listenRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{d}/documents {
    match /docs/{id} { allow read: if resource.data.public == true; allow write: if true; }
    match /posts/{id} { allow read, write: if %s; }
  }
}`

// TestGuard_OpenListenersFollowTheRules: as in production, a listened
// document that changes so that the rules deny it, and a listened query
// the rules deny once they are reloaded, end the Go SDK's listener with
// PERMISSION_DENIED instead of feeding it what the user may not read.
func TestGuard_OpenListenersFollowTheRules(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	const project = "demo-listeners"
	putProjectRules(t, inst, project, fmt.Sprintf(listenRules, "true"))
	c := userClient(t, inst, project, "(default)", "alice")
	if _, err := c.Doc("docs/d1").Set(ctx, map[string]any{"public": true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Doc("posts/p1").Set(ctx, map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}

	docs := c.Doc("docs/d1").Snapshots(ctx)
	defer docs.Stop()
	if snap, err := docs.Next(); err != nil || !snap.Exists() {
		t.Fatalf("first document snapshot: %v", err)
	}
	if _, err := c.Doc("docs/d1").Set(ctx, map[string]any{"public": false, "secret": "s"}); err != nil {
		t.Fatal(err)
	}
	snap, err := docs.Next()
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("after the document became private, the listener got %v, %v; want PERMISSION_DENIED", snap, err)
	}

	posts := c.Collection("posts").Snapshots(ctx)
	defer posts.Stop()
	if qs, err := posts.Next(); err != nil || qs.Size != 1 {
		t.Fatalf("first query snapshot: %v", err)
	}
	putProjectRules(t, inst, project, fmt.Sprintf(listenRules, "false"))
	if _, err := posts.Next(); status.Code(err) != codes.PermissionDenied {
		t.Errorf("after the rules were reloaded to deny, the query listener got %v; want PERMISSION_DENIED", err)
	}
}
