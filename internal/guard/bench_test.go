package guard

import (
	"context"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/identity"
)

// BenchmarkFirestore_Authorize measures what rules add to one client write:
// building the rules request, the traced evaluation, coverage and the
// request-log entry (the engine's own work is not included).
func BenchmarkFirestore_Authorize(b *testing.B) {
	engine, err := firestore.Open(firestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer engine.Close()
	owner := New(nil, nil)
	if err := owner.SetFirestore("demo", "firestore.rules", `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /notes/{id} {
      allow create: if request.auth.uid == request.resource.data.owner && request.resource.data.text.size() < 1000;
    }
  }
}`); err != nil {
		b.Fatal(err)
	}
	g := owner.FirestoreAuthorizer(engine)
	name, err := firestore.ParseDocumentName("projects/demo/databases/(default)/documents/notes/n1")
	if err != nil {
		b.Fatal(err)
	}
	a := firestore.Access{
		Caller: identity.Principal{UID: "alice", Claims: map[string]any{"sub": "alice", "email": "alice@example.com"}},
		Method: firestore.MethodCreate, Name: name, Time: time.Now(),
		Incoming: &pb.Document{Fields: map[string]*pb.Value{
			"owner": {ValueType: &pb.Value_StringValue{StringValue: "alice"}},
			"text":  {ValueType: &pb.Value_StringValue{StringValue: "hello"}},
			"n":     {ValueType: &pb.Value_IntegerValue{IntegerValue: 3}},
		}},
	}
	if err := g.Authorize(context.Background(), a); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = g.Authorize(context.Background(), a)
	}
}
