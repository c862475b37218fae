package rules

import "testing"

func TestNewAuth(t *testing.T) {
	if NewAuth("", map[string]any{"sub": "x"}) != nil {
		t.Fatal("empty uid must be unauthenticated")
	}
	a := NewAuth("alice", map[string]any{"iat": 0.0, "score": 1.5, "firebase": map[string]any{"identities": map[string]any{}, "n": []any{2.0}}})
	rs := mustCompile(t, w2(`match /c/{id} { allow get: if request.auth.token.iat is int && request.auth.token.score is float
      && request.auth.token.firebase.n[0] is int && request.auth.uid == 'alice'; }`))
	r := fsReq(Get, "c/x", a, map[string]any{}, nil)
	if d := rs.Evaluate(r); !d.Allow {
		t.Fatalf("denied: %q", d.Message)
	}
}
