package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"sort"
	"strings"

	"golang.org/x/crypto/scrypt"
)

// Imported password hashes. An account created through the API keeps the
// emulator's fake hash ("fakeHash:salt=…:password=…", as firebase-tools
// stores it, so exports stay readable by it); an account imported with
// batchCreate and a hashAlgorithm keeps the hash it came with and the
// parameters it was made with (HashConfig), and signs in when the password
// hashes to it again. Loupe verifies Firebase's own SCRYPT, the modified
// scrypt of `firebase auth:import --hash-algo=SCRYPT`: scrypt of the
// password with the account's salt followed by the salt separator (N =
// 2^memoryCost, r = rounds, p = 1, 32 bytes) keys AES-256 in CTR mode with a
// zero IV, which encrypts the signer key; the result is the hash. Other
// algorithms are kept but cannot sign in (the answer says so).

// HashAlgorithmScrypt is Firebase's modified scrypt, the one loupe verifies.
const HashAlgorithmScrypt = "SCRYPT"

// hashAlgorithms are the hashAlgorithm values batchCreate takes (the
// Identity Toolkit's HashAlgorithm names).
var hashAlgorithms = map[string]bool{
	"SCRYPT": true, "STANDARD_SCRYPT": true, "BCRYPT": true, "PBKDF_SHA1": true, "PBKDF2_SHA256": true,
	"HMAC_SHA512": true, "HMAC_SHA256": true, "HMAC_SHA1": true, "HMAC_MD5": true,
	"MD5": true, "SHA1": true, "SHA256": true, "SHA512": true,
}

// HashConfig is how a password hash was made: the Identity Toolkit's
// hashConfig (algorithm, base64 signer key and salt separator, rounds,
// memory cost), as the admin API's project config reports it and
// batchCreate takes it.
type HashConfig struct {
	Algorithm     string `json:"algorithm"`
	SignerKey     string `json:"signerKey,omitempty"`
	SaltSeparator string `json:"saltSeparator,omitempty"`
	Rounds        int    `json:"rounds,omitempty"`
	MemoryCost    int    `json:"memoryCost,omitempty"`
}

// Errors of FirebaseScrypt and of batchCreate's hash parameters, worded as
// the Identity Toolkit words them.
var (
	errInvalidHashAlgorithm = badRequest("INVALID_HASH_ALGORITHM")
	errInvalidHashKey       = badRequest("INVALID_HASH_KEY")
	errInvalidSaltSeparator = badRequest("INVALID_SALT_SEPARATOR")
	errInvalidHashRounds    = badRequest("INVALID_HASH_ROUNDS")
	errInvalidMemoryCost    = badRequest("INVALID_HASH_MEMORY_COST")
)

// decodeBase64 reads base64 in any of its forms (standard or URL-safe,
// padded or not): the Admin SDKs send URL-safe without padding, the
// console shows standard with padding.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	s = strings.NewReplacer("-", "+", "_", "/").Replace(s)
	return base64.RawStdEncoding.DecodeString(s)
}

// check validates the parameters of an algorithm loupe verifies; others
// pass as they are.
func (c HashConfig) check() error {
	if !hashAlgorithms[c.Algorithm] {
		return errInvalidHashAlgorithm
	}
	if c.Algorithm != HashAlgorithmScrypt {
		return nil
	}
	if key, err := decodeBase64(c.SignerKey); err != nil || len(key) == 0 {
		return errInvalidHashKey
	}
	if _, err := decodeBase64(c.SaltSeparator); err != nil {
		return errInvalidSaltSeparator
	}
	if c.Rounds < 1 || c.Rounds > 8 {
		return errInvalidHashRounds
	}
	if c.MemoryCost < 1 || c.MemoryCost > 14 {
		return errInvalidMemoryCost
	}
	return nil
}

// FirebaseScrypt hashes password with salt as Firebase's SCRYPT does under
// c (an Algorithm of SCRYPT, base64 SignerKey and SaltSeparator, Rounds
// 1–8, MemoryCost 1–14); the hash is as long as the signer key.
func FirebaseScrypt(password string, salt []byte, c HashConfig) ([]byte, error) {
	if c.Algorithm != HashAlgorithmScrypt {
		return nil, errInvalidHashAlgorithm
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	key, _ := decodeBase64(c.SignerKey)
	sep, _ := decodeBase64(c.SaltSeparator)
	derived, err := scrypt.Key([]byte(password), append(append([]byte{}, salt...), sep...), 1<<c.MemoryCost, c.Rounds, 1, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(derived)
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(key))
	cipher.NewCTR(block, make([]byte, aes.BlockSize)).XORKeyStream(out, key)
	return out, nil
}

// errUnverifiable is the sign-in answer for a password imported with an
// algorithm loupe does not verify.
func errUnverifiable(algorithm string) error {
	return badRequest("INVALID_PASSWORD : loupe verifies imported passwords hashed with SCRYPT (Firebase scrypt) only, not " + algorithm)
}

// checkPassword reports whether password is the account's: against its
// imported hash when it has one, else against the emulator's fake hash. An
// imported hash of an algorithm loupe does not verify is an error saying so.
func (u *User) checkPassword(password string) (bool, error) {
	if u.PasswordHash == "" {
		return false, nil
	}
	if u.HashConfig == nil {
		return u.password() == password, nil
	}
	if u.HashConfig.Algorithm != HashAlgorithmScrypt {
		return false, errUnverifiable(u.HashConfig.Algorithm)
	}
	salt, err := decodeBase64(u.Salt)
	if err != nil {
		return false, nil
	}
	want, err := decodeBase64(u.PasswordHash)
	if err != nil {
		return false, nil
	}
	got, err := FirebaseScrypt(password, salt, *u.HashConfig)
	if err != nil {
		return false, nil
	}
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// ownHashConfig is the SCRYPT configuration loupe reports for a project
// none of whose accounts was imported with one: production's usual rounds
// and memory cost, a signer key derived from the project id (loupe hashes
// no password with it; it is what an importer is told to hash with).
func ownHashConfig(project string) HashConfig {
	key := sha512.Sum512([]byte("loupe password hash signer key of " + project))
	return HashConfig{Algorithm: HashAlgorithmScrypt, SignerKey: base64.StdEncoding.EncodeToString(key[:]),
		SaltSeparator: base64.StdEncoding.EncodeToString([]byte{7}), Rounds: 8, MemoryCost: 14}
}

// hashConfig is the project's password hash parameters, as the admin API's
// project config reports them: those most of its imported SCRYPT accounts
// were hashed with (an export of a Firebase project imported whole has
// one), else loupe's own for the project.
func (p *project) hashConfig(name string) HashConfig {
	counts := map[HashConfig]int{}
	for _, u := range p.users {
		if u.HashConfig != nil && u.HashConfig.Algorithm == HashAlgorithmScrypt {
			counts[*u.HashConfig]++
		}
	}
	if len(counts) == 0 {
		return ownHashConfig(name)
	}
	configs := make([]HashConfig, 0, len(counts))
	for c := range counts {
		configs = append(configs, c)
	}
	sort.Slice(configs, func(i, j int) bool {
		if counts[configs[i]] != counts[configs[j]] {
			return counts[configs[i]] > counts[configs[j]]
		}
		return configs[i].SignerKey < configs[j].SignerKey
	})
	return configs[0]
}

// ProjectConfig is the project's configuration as the admin API
// (identitytoolkit admin/v2 projects/{p}/config) answers it: its name, the
// sign-in settings and the password hash parameters under signIn.hashConfig.
func (s *Engine) ProjectConfig(project string) map[string]any {
	s.store.mu.Lock()
	hc := s.store.project(project).hashConfig(project)
	s.store.mu.Unlock()
	return map[string]any{
		"name": "projects/" + project + "/config",
		"signIn": map[string]any{
			"email":                map[string]any{"enabled": true, "passwordRequired": true},
			"anonymous":            map[string]any{"enabled": true},
			"allowDuplicateEmails": false,
			"hashConfig":           hc,
		},
	}
}
