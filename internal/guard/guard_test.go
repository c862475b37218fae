package guard_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

const db = "projects/demo-loupe/databases/(default)"

func profileWrite(uid, role string) *pb.Write {
	return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{
		Name:   db + "/documents/users/" + uid,
		Fields: map[string]*pb.Value{"name": {ValueType: &pb.Value_StringValue{StringValue: uid}}, "role": {ValueType: &pb.Value_StringValue{StringValue: role}}},
	}}}
}

func TestGuard_TheSameDenialOverGRPCAndREST(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: loupetest.Rules(t, loupetest.RepoFile("firestore.rules"), loupetest.RepoFile("storage.rules"))})
	conn, err := grpc.NewClient(inst.Host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewFirestoreClient(conn)
	as := func(uid string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+loupetest.MockToken(uid))
	}
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		write *pb.Write
		want  codes.Code
	}{
		{"alice creates her profile", as("alice"), profileWrite("alice", "user"), codes.OK},
		{"alice writes bob's profile", as("alice"), profileWrite("bob", "user"), codes.PermissionDenied},
		{"alice makes herself an admin", as("alice"), profileWrite("alice", "admin"), codes.PermissionDenied},
		{"nobody writes a profile", context.Background(), profileWrite("carol", "user"), codes.PermissionDenied},
		{"the owner writes anything", metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer owner"), profileWrite("bob", "admin"), codes.OK},
	} {
		_, err := client.Commit(tc.ctx, &pb.CommitRequest{Database: db, Writes: []*pb.Write{tc.write}})
		if status.Code(err) != tc.want {
			t.Errorf("gRPC: %s: %v, want %s", tc.name, err, tc.want)
		}
	}
	_, err = client.Commit(as("alice"), &pb.CommitRequest{Database: db, Writes: []*pb.Write{profileWrite("bob", "user")}})
	if msg := status.Convert(err).Message(); !strings.HasPrefix(msg, "\nfalse for 'update' @ L") {
		t.Errorf("denial message %q, want the emulator's shape", msg)
	}
	var body string
	code, err := loupetest.RESTCommit(context.Background(), inst.URL, db, loupetest.MockToken("alice"), `{"writes":[{"update":{"name":"`+db+`/documents/users/bob","fields":{"name":{"stringValue":"x"}}}}]}`, &body)
	if err != nil || code != 403 || !strings.Contains(body, `"status":"PERMISSION_DENIED"`) {
		t.Errorf("REST: %d %s %v", code, body, err)
	}

	// Lists are judged against the query: alice may list her own notifications only.
	query := func(filter string) int {
		q := `{"structuredQuery":{"from":[{"collectionId":"notifications"}]` + filter + `}}`
		req, _ := http.NewRequest("POST", inst.URL+"/v1/"+db+"/documents:runQuery", strings.NewReader(q))
		req.Header.Set("Authorization", "Bearer "+loupetest.MockToken("alice"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := query(`,"where":{"fieldFilter":{"field":{"fieldPath":"userId"},"op":"EQUAL","value":{"stringValue":"alice"}}}`); c != 200 {
		t.Errorf("alice lists her notifications: %d", c)
	}
	if c := query(``); c != 403 {
		t.Errorf("alice lists every notification: %d, want 403", c)
	}
}

func TestGuard_StorageRulesAndReplacingRules(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: loupetest.Rules(t, loupetest.RepoFile("firestore.rules"), loupetest.RepoFile("storage.rules"))})
	upload := func(uid, path, contentType string) int {
		req, _ := http.NewRequest("POST", inst.URL+"/v0/b/demo-loupe.appspot.com/o?name="+path, strings.NewReader("PNGDATA"))
		req.Header.Set("Authorization", "Firebase "+loupetest.MockToken(uid))
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := upload("alice", "avatars%2Falice%2Fme.png", "image/png"); c != 200 {
		t.Errorf("alice uploads her avatar: %d", c)
	}
	if c := upload("alice", "avatars%2Fbob%2Fme.png", "image/png"); c != 403 {
		t.Errorf("alice uploads bob's avatar: %d, want 403", c)
	}
	if c := upload("alice", "avatars%2Falice%2Fme.exe", "application/octet-stream"); c != 403 {
		t.Errorf("alice uploads a program as her avatar: %d, want 403", c)
	}

	// rules-unit-testing replaces the Firestore rules at run time.
	put := func(content string) int {
		body, _ := json.Marshal(map[string]any{"rules": map[string]any{"files": []map[string]string{{"name": "firestore.rules", "content": content}}}})
		req, _ := http.NewRequest("PUT", inst.URL+"/emulator/v1/projects/demo-loupe:securityRules", strings.NewReader(string(body)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := put("rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /{doc=**} { allow read, write: if true; } } }"); c != 200 {
		t.Fatalf("PUT rules: %d", c)
	}
	var answer string
	if code, err := loupetest.RESTCommit(context.Background(), inst.URL, db, loupetest.MockToken("alice"), `{"writes":[{"update":{"name":"`+db+`/documents/users/bob","fields":{}}}]}`, &answer); err != nil || code != 200 {
		t.Errorf("after opening the rules: %d %s %v", code, answer, err)
	}
	if c := put("service cloud.firestore { match /x { allow read: if ; } }"); c != 400 {
		t.Errorf("PUT broken rules: %d, want 400", c)
	}
}

func TestGuard_ReloadsEditedRulesKeepingTheLastGoodOnes(t *testing.T) {
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "firestore.rules")
	deny := "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /{doc=**} { allow read, write: if false; } } }\n"
	allow := strings.Replace(deny, "if false", "if true", 1)
	if err := os.WriteFile(rulesFile, []byte(deny), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "firebase.json")
	if err := os.WriteFile(cfg, []byte(`{"firestore":{"rules":"firestore.rules"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: cfg})
	write := func() int {
		code, err := loupetest.RESTCommit(context.Background(), inst.URL, db, loupetest.MockToken("alice"), `{"writes":[{"update":{"name":"`+db+`/documents/notes/n1","fields":{}}}]}`, nil)
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	waitFor := func(want int) {
		t.Helper()
		for i := 0; i < 100 && write() != want; i++ {
			time.Sleep(50 * time.Millisecond)
		}
		if got := write(); got != want {
			t.Fatalf("write answered %d, want %d", got, want)
		}
	}
	waitFor(403)
	if err := os.WriteFile(rulesFile, []byte(allow), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(200)
	if err := os.WriteFile(rulesFile, []byte("service cloud.firestore {\n  match /a { allow read: if ; }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100 && !strings.Contains(inst.Log(), "rules not reloaded"); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(inst.Log(), "firestore.rules:2:29") {
		t.Errorf("log does not name the broken line and column:\n%s", inst.Log())
	}
	if got := write(); got != 200 {
		t.Errorf("after a broken edit: %d, want the last good rules (200)", got)
	}
}

func TestGuard_StorageSetRules(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	put := func(content string) (int, string) {
		body, _ := json.Marshal(map[string]any{"rules": map[string]any{"files": []map[string]string{{"name": "storage.rules", "content": content}}}})
		req, _ := http.NewRequest("PUT", inst.URL+"/internal/setRules", strings.NewReader(string(body)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	if code, body := put("rules_version = '2';\nservice firebase.storage { match /b/{b}/o { match /{f=**} { allow read, write: if false; } } }"); code != 200 || !strings.Contains(body, "Rules updated successfully") {
		t.Fatalf("setRules: %d %s", code, body)
	}
	req, _ := http.NewRequest("POST", inst.URL+"/v0/b/demo-loupe.appspot.com/o?name=x.txt", strings.NewReader("x"))
	req.Header.Set("Authorization", "Firebase "+loupetest.MockToken("alice"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("upload under deny-all rules: %d, want 403", resp.StatusCode)
	}
	if code, _ := put("service firebase.storage { match /b/{b}/o { allow read: if ; } }"); code != 400 {
		t.Errorf("broken rules: %d, want 400", code)
	}
}
