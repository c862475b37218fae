package rules

import "testing"

// BenchmarkEvaluate_AuthAndGet evaluates a typical rule: an auth check plus
// one get() (the read itself is an in-memory map here).
func BenchmarkEvaluate_AuthAndGet(b *testing.B) {
	rs, err := Parse("bench.rules", w2(`match /feedbackRequests/{r}/comments/{c} {
      allow create: if request.auth != null && request.resource.data.userId == request.auth.uid
        && request.auth.uid in [get(/databases/$(database)/documents/feedbackRequests/$(r)).data.requesterId,
                                get(/databases/$(database)/documents/feedbackRequests/$(r)).data.mentorId];
    }`))
	if err != nil {
		b.Fatal(err)
	}
	docs := store{before: map[string]map[string]Value{root + "feedbackRequests/r1": {"requesterId": "alice", "mentorId": "bob"}}}
	req := &Request{Method: "create", Path: root + "feedbackRequests/r1/comments/c1", Auth: alice(),
		RequestResource: map[string]Value{"data": map[string]Value{"userId": "alice", "content": "hi"}}}
	b.ResetTimer()
	for range b.N {
		if d := rs.Evaluate("cloud.firestore", req, docs); !d.Allow {
			b.Fatal(d.Message)
		}
	}
}
