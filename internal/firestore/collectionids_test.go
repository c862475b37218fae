package firestore_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestConformance_ListCollectionIdsNeedsAdmin checks that, as in
// production, only admin credentials list collection ids: an end user (or
// nobody) gets PERMISSION_DENIED over REST and gRPC, whatever the rules allow.
func TestConformance_ListCollectionIdsNeedsAdmin(t *testing.T) {
	ctx := context.Background()
	rulesFile := filepath.Join(t.TempDir(), "firestore.rules")
	if err := os.WriteFile(rulesFile, []byte(`rules_version = '2';
service cloud.firestore {
  match /databases/{db}/documents {
    match /{doc=**} { allow read, write: if true; }
  }
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: loupetest.Rules(t, rulesFile, "")})
	c := newClient(t, inst)
	if _, err := c.Doc("users/bob/notes/n1").Set(ctx, map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
	// The Admin SDK (the owner) lists them.
	colls, err := c.Doc("users/bob").Collections(ctx).GetAll()
	if err != nil || len(colls) != 1 || colls[0].ID != "notes" {
		t.Fatalf("owner: Collections = %v, %v; want [notes]", colls, err)
	}

	parent := "projects/" + project + "/databases/(default)/documents/users/bob"
	for _, bearer := range []string{"Bearer " + loupetest.MockToken("alice"), ""} {
		req, _ := http.NewRequest("POST", inst.URL+"/v1/"+parent+":listCollectionIds", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if bearer != "" {
			req.Header.Set("Authorization", bearer)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 403 || !strings.Contains(string(body), `"PERMISSION_DENIED"`) || !strings.Contains(string(body), "Missing or insufficient permissions.") || strings.Contains(string(body), "notes") {
			t.Errorf("REST listCollectionIds with %q = %d %s; want 403 PERMISSION_DENIED", bearer, res.StatusCode, body)
		}
	}

	conn, err := grpc.NewClient(inst.Host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	userCtx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+loupetest.MockToken("alice"))
	_, err = pb.NewFirestoreClient(conn).ListCollectionIds(userCtx, &pb.ListCollectionIdsRequest{Parent: "projects/" + project + "/databases/(default)/documents"})
	if status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() != "Missing or insufficient permissions." {
		t.Errorf("gRPC ListCollectionIds as alice: %v; want PERMISSION_DENIED", err)
	}
}
