package rules

import "testing"

// authAndGet is a typical rule: an auth check plus one get() whose read is
// served from memory (the read itself is not what is measured).
func authAndGet(b *testing.B) (*Ruleset, *Request) {
	rs := mustCompile(b, w2(`
    function isMember(room) {
      return get(/databases/$(database)/documents/rooms/$(room)/members/$(request.auth.uid)).data.role in ['owner', 'member'];
    }
    match /rooms/{room}/messages/{msg} {
      allow read: if request.auth != null && isMember(room);
    }`))
	docs := memDocs{before: map[string]map[string]any{db + "rooms/r1/members/alice": {"role": "member"}}}
	req := fsReq(Get, "rooms/r1/messages/m1", user("alice"), map[string]any{"text": "hi"}, nil)
	req.Documents = docs
	if d := rs.Evaluate(req); !d.Allow {
		b.Fatalf("denied: %s", d.Message)
	}
	return rs, req
}

// BenchmarkRuleset_Evaluate_AuthAndGet measures that rule's evaluation.
func BenchmarkRuleset_Evaluate_AuthAndGet(b *testing.B) {
	rs, req := authAndGet(b)
	b.ReportAllocs()
	for b.Loop() {
		rs.Evaluate(req)
	}
}

// BenchmarkRuleset_EvaluateTrace_AuthAndGet is the same evaluation traced, as
// loupe serve runs it: every expression's value recorded and counted for coverage.
func BenchmarkRuleset_EvaluateTrace_AuthAndGet(b *testing.B) {
	rs, req := authAndGet(b)
	b.ReportAllocs()
	for b.Loop() {
		rs.EvaluateTrace(req)
	}
}
