package auth

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
)

// The example of github.com/firebase/scrypt's README: a project's password
// hash parameters, an exported account's salt, its password, and the hash
// Firebase's utility computes for them.
var firebaseExample = struct {
	config         HashConfig
	salt, password string
	hash           string
}{
	config: HashConfig{Algorithm: "SCRYPT", Rounds: 8, MemoryCost: 14, SaltSeparator: "Bw==",
		SignerKey: "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="},
	salt:     "42xEC+ixf3L2lw==",
	password: "user1password",
	hash:     "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
}

func TestFirebaseScrypt_MatchesFirebasesUtility(t *testing.T) {
	ex := firebaseExample
	salt, _ := base64.StdEncoding.DecodeString(ex.salt)
	got, err := FirebaseScrypt(ex.password, salt, ex.config)
	if err != nil {
		t.Fatal(err)
	}
	if b64 := base64.StdEncoding.EncodeToString(got); b64 != ex.hash {
		t.Errorf("hash %s, want %s", b64, ex.hash)
	}
	// The parameters in the URL-safe, unpadded form the Admin SDKs send
	// give the same hash.
	urlSafe := ex.config
	key, _ := base64.StdEncoding.DecodeString(ex.config.SignerKey)
	urlSafe.SignerKey = base64.RawURLEncoding.EncodeToString(key)
	urlSafe.SaltSeparator = "Bw"
	if again, err := FirebaseScrypt(ex.password, salt, urlSafe); err != nil || base64.StdEncoding.EncodeToString(again) != ex.hash {
		t.Errorf("with URL-safe parameters: %v, %v", again, err)
	}
	for _, tc := range []struct {
		name string
		edit func(*HashConfig)
		want string
	}{
		{"rounds 0", func(c *HashConfig) { c.Rounds = 0 }, "INVALID_HASH_ROUNDS"},
		{"rounds 9", func(c *HashConfig) { c.Rounds = 9 }, "INVALID_HASH_ROUNDS"},
		{"memory cost 15", func(c *HashConfig) { c.MemoryCost = 15 }, "INVALID_HASH_MEMORY_COST"},
		{"no signer key", func(c *HashConfig) { c.SignerKey = "" }, "INVALID_HASH_KEY"},
		{"signer key not base64", func(c *HashConfig) { c.SignerKey = "%%%" }, "INVALID_HASH_KEY"},
		{"salt separator not base64", func(c *HashConfig) { c.SaltSeparator = "%" }, "INVALID_SALT_SEPARATOR"},
		{"another algorithm", func(c *HashConfig) { c.Algorithm = "BCRYPT" }, "INVALID_HASH_ALGORITHM"},
	} {
		c := ex.config
		tc.edit(&c)
		if _, err := FirebaseScrypt(ex.password, salt, c); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
}

// importCall is batchCreate of users with the hash parameters of c (none
// when c is nil), as the Admin SDKs' importUsers sends it.
func importCall(c *HashConfig, users ...map[string]any) *Call {
	list := make([]any, len(users)) // as JSON decodes them
	for i, u := range users {
		list[i] = u
	}
	params := map[string]any{"users": list}
	if c != nil {
		params["hashAlgorithm"] = c.Algorithm
		params["signerKey"] = c.SignerKey
		params["saltSeparator"] = c.SaltSeparator
		params["rounds"] = float64(c.Rounds)
		params["memoryCost"] = float64(c.MemoryCost)
	}
	return &Call{Project: "demo-loupe", Admin: true, Params: params}
}

// TestEngine_ImportedScryptPasswordsSignIn: an account imported with
// Firebase's scrypt hash signs in with its password (and only with it),
// after a restart too; the project reports those parameters as its own;
// the API never shows loupe's record of them; a hash of an algorithm loupe
// does not verify is refused saying so, and bad parameters are refused.
func TestEngine_ImportedScryptPasswordsSignIn(t *testing.T) {
	dir := t.TempDir()
	e, err := NewEngine(dir, "demo-loupe", identity.Local)
	if err != nil {
		t.Fatal(err)
	}
	ex := firebaseExample
	if before := e.ProjectConfig("demo-loupe")["signIn"].(map[string]any)["hashConfig"].(HashConfig); before.SignerKey == ex.config.SignerKey || before.Algorithm != "SCRYPT" {
		t.Errorf("before any import the project reports %+v, want loupe's own SCRYPT parameters", before)
	}
	urlSafe := func(std string) string {
		b, _ := base64.StdEncoding.DecodeString(std)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	sdk := ex.config // as the Go Admin SDK encodes them
	sdk.SignerKey, sdk.SaltSeparator = urlSafe(sdk.SignerKey), urlSafe(sdk.SaltSeparator)
	out, err := e.Do("batchCreate", importCall(&sdk, map[string]any{"localId": "u1", "email": "User1@Example.com",
		"passwordHash": urlSafe(ex.hash), "salt": urlSafe(ex.salt), "createdAt": float64(1500000000000)}))
	if err != nil || out["error"] != nil {
		t.Fatalf("batchCreate: %v %v", out, err)
	}
	if _, err := e.Do("batchCreate", importCall(&HashConfig{Algorithm: "BCRYPT"}, map[string]any{"localId": "u2", "email": "user2@example.com",
		"passwordHash": base64.RawURLEncoding.EncodeToString([]byte("$2a$10$abcdefghijklmnopqrstuu")), "salt": ""})); err != nil {
		t.Fatal(err)
	}
	signIn := func(e *Engine, email, password string) error {
		_, err := e.Do("signInWithPassword", &Call{Project: "demo-loupe", Params: map[string]any{"email": email, "password": password}})
		return err
	}
	check := func(e *Engine) {
		t.Helper()
		if err := signIn(e, "user1@example.com", ex.password); err != nil {
			t.Errorf("sign-in with the imported password: %v", err)
		}
		if err := signIn(e, "user1@example.com", "user2password"); err == nil || err.Error() != "INVALID_PASSWORD" {
			t.Errorf("sign-in with another password: %v, want INVALID_PASSWORD", err)
		}
		if err := signIn(e, "user2@example.com", "whatever"); err == nil || !strings.HasPrefix(err.Error(), "INVALID_PASSWORD : loupe verifies imported passwords hashed with SCRYPT") {
			t.Errorf("sign-in of a BCRYPT account: %v, want INVALID_PASSWORD saying why", err)
		}
		if got := e.ProjectConfig("demo-loupe")["signIn"].(map[string]any)["hashConfig"].(HashConfig); got != ex.config {
			t.Errorf("project hash config %+v, want the import's %+v", got, ex.config)
		}
		out, err := e.Do("lookup", &Call{Project: "demo-loupe", Admin: true, Params: map[string]any{"localId": []any{"u1"}}})
		users, _ := out["users"].([]map[string]any)
		if err != nil || len(users) != 1 || users[0]["passwordHash"] != urlSafe(ex.hash) || users[0]["loupeHashConfig"] != nil || users[0]["createdAt"] != "1500000000000" {
			t.Errorf("lookup: %v %v, want the hash as imported and no loupe field", out, err)
		}
		if providers, _ := users[0]["providerUserInfo"].([]any); len(providers) != 1 {
			t.Errorf("providers %v, want the password provider", users[0]["providerUserInfo"])
		}
	}
	check(e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	reopened, err := NewEngine(dir, "demo-loupe", identity.Local)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	check(reopened)
	// A new password replaces the imported hash with the emulator's own.
	if _, err := reopened.Do("update", &Call{Project: "demo-loupe", Admin: true, Params: map[string]any{"localId": "u1", "password": "brand-new-1"}}); err != nil {
		t.Fatal(err)
	}
	if err := signIn(reopened, "user1@example.com", "brand-new-1"); err != nil {
		t.Errorf("sign-in with the new password: %v", err)
	}
	bad := sdk
	bad.Rounds = 0
	if _, err := reopened.Do("batchCreate", importCall(&bad, map[string]any{"localId": "u3", "passwordHash": "aGFzaA", "salt": "c2FsdA"})); errs.KindOf(err) != errs.InvalidArgument || err.Error() != "INVALID_HASH_ROUNDS" {
		t.Errorf("import with rounds 0: %v, want INVALID_HASH_ROUNDS", err)
	}
	if _, err := reopened.Do("batchCreate", importCall(&HashConfig{Algorithm: "ROT13"}, map[string]any{"localId": "u3"})); err == nil || err.Error() != "INVALID_HASH_ALGORITHM" {
		t.Errorf("import with an unknown algorithm: %v, want INVALID_HASH_ALGORITHM", err)
	}
}
