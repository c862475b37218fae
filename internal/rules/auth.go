package rules

import "math"

// NewAuth builds request.auth from a user id and decoded JWT claims (as JSON decoding yields them):
// integral JSON numbers become int, others float, recursively, as rules see token claims.
// An empty uid means unauthenticated and returns nil.
func NewAuth(uid string, claims map[string]any) *Auth {
	if uid == "" {
		return nil
	}
	tok, _ := jsonTyped(claims).(map[string]any)
	if tok == nil {
		tok = map[string]any{}
	}
	return &Auth{UID: uid, Token: tok}
}

func jsonTyped(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonTyped(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonTyped(e)
		}
		return out
	}
	return norm(v)
}
