package guard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

func notesRules(cond string) string {
	return "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /notes/{id} { allow read, write: if " + cond + "; } } }"
}

// bearer sends a user's token on every call, as a client app would.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}
func (bearer) RequireTransportSecurity() bool { return false }

// userClient is the Go SDK acting as a signed-in user (not the owner) of a
// project's database.
func userClient(t *testing.T, inst *loupetest.Instance, project, database, uid string) *firestore.Client {
	t.Helper()
	t.Setenv("FIRESTORE_EMULATOR_HOST", "") // else the SDK sends the owner credential
	c, err := firestore.NewClientWithDatabase(context.Background(), project, database,
		option.WithEndpoint(inst.Host), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		option.WithGRPCDialOption(grpc.WithPerRPCCredentials(bearer(loupetest.MockToken(uid)))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func putProjectRules(t *testing.T, inst *loupetest.Instance, project, source string) {
	body, _ := json.Marshal(map[string]any{"rules": map[string]any{"files": []map[string]string{{"name": "firestore.rules", "content": source}}}})
	req, _ := http.NewRequest("PUT", inst.URL+"/emulator/v1/projects/"+project+":securityRules", strings.NewReader(string(body)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("PUT rules of %s: %d", project, resp.StatusCode)
	}
}

func TestGuard_RulesAndDataPerProject(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	var wg sync.WaitGroup
	for project, cond := range map[string]string{"demo-writers": "request.auth != null", "demo-readers": "false"} {
		wg.Add(1)
		go func() { defer wg.Done(); putProjectRules(t, inst, project, notesRules(cond)) }()
	}
	wg.Wait()
	ctx := context.Background()
	writers := userClient(t, inst, "demo-writers", "(default)", "alice")
	readers := userClient(t, inst, "demo-readers", "(default)", "alice")
	if _, err := writers.Doc("notes/n1").Set(ctx, map[string]any{"by": "writers"}); err != nil {
		t.Errorf("demo-writers: write under its own rules: %v", err)
	}
	if _, err := readers.Doc("notes/n1").Set(ctx, map[string]any{"by": "readers"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("demo-readers: write = %v, want PERMISSION_DENIED from its own rules", err)
	}
	if _, err := readers.Doc("notes/n1").Get(ctx); status.Code(err) != codes.PermissionDenied {
		t.Errorf("demo-readers: read = %v, want PERMISSION_DENIED", err)
	}
	snap, err := writers.Doc("notes/n1").Get(ctx)
	if err != nil || snap.Data()["by"] != "writers" {
		t.Errorf("demo-writers reads back %v, %v", snap.Data(), err)
	}
}

func TestGuard_RulesPerDatabaseFromFirebaseJSON(t *testing.T) {
	dir := t.TempDir()
	for name, cond := range map[string]string{"open.rules": "true", "closed.rules": "false"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(notesRules(cond)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "firebase.json")
	if err := os.WriteFile(cfg, []byte(`{"firestore":[{"database":"(default)","rules":"open.rules"},{"database":"orders","rules":"closed.rules"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: cfg})
	ctx := context.Background()
	if _, err := userClient(t, inst, "demo-loupe", "(default)", "alice").Doc("notes/n1").Set(ctx, map[string]any{"n": 1}); err != nil {
		t.Errorf("(default) database, open rules: %v", err)
	}
	if _, err := userClient(t, inst, "demo-loupe", "orders", "alice").Doc("notes/n1").Set(ctx, map[string]any{"n": 1}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("orders database, closed rules: %v, want PERMISSION_DENIED", err)
	}
	// A load through the emulator endpoint for the project wins over both files.
	putProjectRules(t, inst, "demo-loupe", notesRules("true"))
	if _, err := userClient(t, inst, "demo-loupe", "orders", "alice").Doc("notes/n1").Set(ctx, map[string]any{"n": 1}); err != nil {
		t.Errorf("orders database after loading open rules for the project: %v", err)
	}
}
