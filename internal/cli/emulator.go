package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// emulatorClient calls loupe's own /emulator/... endpoints: what only a
// local loupe has (the push inbox, captured e-mail, export and import).
type emulatorClient struct {
	base    string
	project string
}

// emulatorOnly resolves the target to a running loupe, or explains that the
// command has no production counterpart.
func (t *TargetOptions) emulatorOnly(ctx context.Context, what string) (*emulatorClient, error) {
	host := t.emulatorHost()
	if host == "" {
		return nil, &UsageError{fmt.Errorf("%s needs a running loupe: pass --emulator HOST:PORT", what)}
	}
	if err := ping(ctx, host); err != nil {
		return nil, err
	}
	return &emulatorClient{base: "http://" + host, project: firstNonEmpty(t.Project, "demo-loupe")}, nil
}

// do sends a request and decodes a JSON answer into out; a non-2xx answer is
// an error carrying the server's message.
func (c *emulatorClient) do(ctx context.Context, method, path string, body, out any) error {
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		reader = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, reader)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer owner")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the emulator at %s", strings.TrimPrefix(c.base, "http://"))
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error any `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != nil {
			if m, ok := e.Error.(map[string]any); ok {
				return fmt.Errorf("%v", m["message"])
			}
			return fmt.Errorf("%v", e.Error)
		}
		return fmt.Errorf("%s %s: status %d", method, path, resp.StatusCode)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// absPath resolves a folder argument so the server (same machine) finds it.
func absPath(p string) (string, error) {
	if p == "" {
		return "", usageErrorf("a folder is required")
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(p, "/") {
		p = wd + "/" + p
	}
	return p, nil
}
