package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The owner's methods: batch create, delete and download, query, and
// import/export in firebase-tools' format.

func (s *Engine) batchDelete(q *Call) (map[string]any, error) {
	p := s.store.project(q.Project)
	for _, id := range q.strings("localIds") {
		p.remove(id)
	}
	return map[string]any{}, nil
}

func (s *Engine) batchCreate(q *Call) (map[string]any, error) {
	p := s.store.project(q.Project)
	if list, ok := q.Params["users"].([]any); ok {
		for _, e := range list {
			// The times are int64s, which the Admin SDKs send as JSON
			// numbers and exports hold as strings.
			if m, ok := e.(map[string]any); ok {
				for _, k := range []string{"createdAt", "lastLoginAt", "validSince"} {
					if n, ok := m[k].(float64); ok {
						m[k] = strconv.FormatFloat(n, 'f', 0, 64)
					}
				}
			}
		}
	}
	raw, _ := json.Marshal(q.Params["users"])
	var users []*User
	if err := json.Unmarshal(raw, &users); err != nil {
		return nil, malformed("Invalid JSON payload received. users must be a list of accounts")
	}
	hash, err := importHashConfig(q)
	if err != nil {
		return nil, err
	}
	var failed []map[string]any
	for i, u := range users {
		if u.LocalID == "" {
			failed = append(failed, map[string]any{"index": i, "message": "localId is missing"})
			continue
		}
		if u.PhoneNumber != "" && !strings.HasPrefix(u.PhoneNumber, "+") {
			failed = append(failed, map[string]any{"index": i, "message": "phone number format is invalid"})
			continue
		}
		if u.CreatedAt == "" {
			u.CreatedAt = millis(s.now())
		}
		u.Email = strings.ToLower(u.Email)
		u.HashConfig = nil
		if u.PasswordHash != "" && hash != nil {
			u.HashConfig = hash
		}
		if u.PasswordHash != "" && u.Email != "" && u.provider("password") == nil {
			u.ProviderUserInfo = append(u.ProviderUserInfo, ProviderInfo{ProviderID: "password", Email: u.Email, FederatedID: u.Email, RawID: u.Email, DisplayName: u.DisplayName, PhotoURL: u.PhotoURL})
		}
		p.put(u)
	}
	out := map[string]any{}
	if failed != nil {
		out["error"] = failed
	}
	return out, nil
}

// importHashConfig is how the password hashes of a batchCreate were made:
// its hashAlgorithm and parameters, nil without a hashAlgorithm (the
// hashes are then kept as they are, as firebase-tools keeps its own fake
// ones).
func importHashConfig(q *Call) (*HashConfig, error) {
	algorithm := strings.ToUpper(q.str("hashAlgorithm"))
	if algorithm == "" {
		return nil, nil
	}
	number := func(key string) int {
		n, _ := strconv.Atoi(q.str(key))
		return n
	}
	c := &HashConfig{Algorithm: algorithm, SignerKey: q.str("signerKey"), SaltSeparator: q.str("saltSeparator"),
		Rounds: number("rounds"), MemoryCost: number("memoryCost")}
	if err := c.check(); err != nil {
		return nil, err
	}
	// Kept in the console's form (standard base64, padded), whichever
	// form the caller sent, so that equal parameters compare equal.
	for _, f := range []*string{&c.SignerKey, &c.SaltSeparator} {
		if b, err := decodeBase64(*f); err == nil && *f != "" {
			*f = base64.StdEncoding.EncodeToString(b)
		}
	}
	return c, nil
}

func (s *Engine) batchGet(q *Call) (map[string]any, error) {
	max, _ := strconv.Atoi(q.str("maxResults"))
	if max <= 0 || max > 1000 {
		max = 1000
	}
	after := q.str("nextPageToken")
	var page []map[string]any
	next := ""
	for _, u := range s.store.project(q.Project).sorted() {
		if u.LocalID <= after {
			continue
		}
		if len(page) == max {
			next = page[len(page)-1]["localId"].(string)
			break
		}
		page = append(page, userInfo(u))
	}
	out := map[string]any{"kind": "identitytoolkit#DownloadAccountResponse"}
	if page != nil {
		out["users"] = page
	}
	if next != "" {
		out["nextPageToken"] = next
	}
	return out, nil
}

func (s *Engine) query(q *Call) (map[string]any, error) {
	var users []map[string]any
	for _, u := range s.store.project(q.Project).sorted() {
		users = append(users, userInfo(u))
	}
	return map[string]any{"recordsCount": strconv.Itoa(len(users)), "userInfo": users}, nil
}

// ExportDir is the folder of an export that holds the accounts.
const ExportDir = "auth_export"

// Export writes accounts.json and config.json in
// firebase-tools' format, for the default project.
func (s *Engine) Export(_ context.Context, dir string) error {
	out := filepath.Join(dir, ExportDir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	s.store.mu.Lock()
	users := s.store.project(s.projectID).sorted()
	s.store.mu.Unlock()
	accounts, _ := json.MarshalIndent(map[string]any{"kind": "identitytoolkit#DownloadAccountResponse", "users": users}, "", "  ")
	if err := os.WriteFile(filepath.Join(out, "accounts.json"), append(accounts, '\n'), 0o644); err != nil {
		return err
	}
	config, _ := json.MarshalIndent(Config(), "", "  ")
	return os.WriteFile(filepath.Join(out, "config.json"), append(config, '\n'), 0o644)
}

// Import makes the default project's accounts those of
// dir/auth_export/accounts.json (nothing changes without the file).
func (s *Engine) Import(_ context.Context, dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, ExportDir, "accounts.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var file struct {
		Users []*User `json:"users"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return fmt.Errorf("auth_export/accounts.json: %w", err)
	}
	_, err = s.store.run(func() error {
		p := s.store.project(s.projectID)
		p.clear()
		for _, u := range file.Users {
			if u.LocalID != "" {
				p.put(u)
			}
		}
		return nil
	})
	return err
}
