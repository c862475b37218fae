package functions

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// BlockingFunctions calls the Auth blocking functions (beforeCreate,
// beforeSignIn, …) of every codebase for the Auth emulator, as production
// calls them: an HTTP POST of {"data": {"jwt": …}} whose answer is
// {"userRecord": {…, "updateMask"}} or an error. It implements auth.Blocking.
type BlockingFunctions struct{ s *Service }

// Blocking returns the Auth emulator's way to the blocking functions.
func (s *Service) Blocking() BlockingFunctions { return BlockingFunctions{s} }

// find returns the codebase and function declared for event.
func (b BlockingFunctions) find(event string) (*codebase, Function, bool) {
	for _, c := range b.s.codebases {
		for _, f := range c.functions() {
			if f.Kind == KindBlocking && f.BlockingEvent == event {
				return c, f, true
			}
		}
	}
	return nil, Function{}, false
}

// Declared reports whether a function is declared for event.
func (b BlockingFunctions) Declared(event string) bool {
	_, _, ok := b.find(event)
	return ok
}

// Call posts the event's claims, as an unsigned JWT (the SDK skips
// verification under the emulator, as with firebase-tools), to the
// function, and returns its status and body.
func (b BlockingFunctions) Call(ctx context.Context, event string, claims map[string]any) (int, []byte, error) {
	c, f, ok := b.find(event)
	if !ok {
		return 0, nil, fmt.Errorf("no %s function is declared", event)
	}
	p, release, ok := c.acquire()
	if !ok {
		return 0, nil, fmt.Errorf("the %s function %s is not running", event, f.Name)
	}
	defer release()
	run := b.s.runs.begin(c.name, f.Name)
	status, answer, err := b.post(withRun(ctx, run), httpBase(p, f).String(), claims)
	b.s.runs.end(run, status, err)
	return status, answer, err
}

// post sends the claims to the function at url.
func (b BlockingFunctions) post(ctx context.Context, url string, claims map[string]any) (int, []byte, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return 0, nil, err
	}
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	jwt := header + "." + base64.RawURLEncoding.EncodeToString(payload) + "."
	body, _ := json.Marshal(map[string]any{"data": map[string]string{"jwt": jwt}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := deliveryClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, answer, err
}
