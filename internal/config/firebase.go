// Package config reads firebase.json, the project file that firebase-tools and
// loupe share: emulator ports, rules files, hosting and functions.
//
// Only the parts loupe acts on are modelled; unknown keys are ignored, as
// firebase-tools ignores them. A file that is not valid JSON, or whose known
// keys have the wrong shape, is an error naming the file and the position.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Firebase is the parsed firebase.json.
type Firebase struct {
	// Dir is the folder that holds the file; relative paths resolve against it.
	Dir string `json:"-"`
	// Firestore is the block of the (default) database: the object form of
	// "firestore", or the array form's entry for "(default)"; nil if none.
	Firestore *RulesConfig `json:"-"`
	// Storage is the object form of "storage" (rules for every bucket); nil
	// for the array form or when absent.
	Storage *RulesConfig `json:"-"`
	// FirestoreConfigs and StorageConfigs are every entry of "firestore" and
	// "storage": one for the object form, one per database or bucket for the
	// array form.
	FirestoreConfigs RulesConfigs `json:"firestore,omitempty"`
	StorageConfigs   RulesConfigs `json:"storage,omitempty"`
	// DatabaseConfigs are the Realtime Database's rules files: the object
	// form (every instance) or one per instance in the array form.
	DatabaseConfigs RulesConfigs `json:"database,omitempty"`
	Hosting         *Hosting     `json:"hosting,omitempty"`
	Functions       Codebases    `json:"functions,omitempty"`
	Emulators       Emulators    `json:"emulators,omitempty"`
	// CORS are the origins of pages, besides this machine's, that may call
	// the emulators (emulators.cors, a loupe extension: ["https://app.example"]).
	CORS []string `json:"-"`
	// PassThrough are the services loupe forwards to production instead of
	// emulating (emulators.passThrough, a loupe extension: ["storage"]).
	PassThrough []string `json:"-"`
	// RC is the .firebaserc beside the file (empty without one).
	RC *RC `json:"-"`
}

// RulesConfig names the rules (and indexes) file of Firestore or Storage. In
// the array form each entry names its Firestore database or Storage bucket,
// or a Storage deploy target (ResolveStorageTargets).
type RulesConfig struct {
	Database string `json:"database,omitempty"`
	Bucket   string `json:"bucket,omitempty"`
	// Instance is the Realtime Database instance (namespace) of an entry of
	// "database"'s array form.
	Instance string `json:"instance,omitempty"`
	Target   string `json:"target,omitempty"`
	Rules    string `json:"rules,omitempty"`
	Indexes  string `json:"indexes,omitempty"`
	// Edition is the Firestore database's edition: "standard" (the
	// default) or "enterprise", which serves pipelines.
	Edition string `json:"edition,omitempty"`
}

// RulesConfigs is "firestore" or "storage" in either of firebase.json's
// forms: one object, or an array of objects.
type RulesConfigs []RulesConfig

// UnmarshalJSON implements json.Unmarshaler.
func (c *RulesConfigs) UnmarshalJSON(data []byte) error {
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		var one RulesConfig
		if err := json.Unmarshal(data, &one); err != nil {
			return err
		}
		*c = RulesConfigs{one}
		return nil
	}
	var many []RulesConfig
	if err := json.Unmarshal(data, &many); err != nil {
		return err
	}
	*c = many
	return nil
}

// DefaultDatabase is the Firestore database an entry without one names.
const DefaultDatabase = "(default)"

// Hosting is the hosting block: the public folder and its rewrites.
type Hosting struct {
	Public   string    `json:"public,omitempty"`
	Rewrites []Rewrite `json:"rewrites,omitempty"`
}

// Rewrite maps a glob source to a destination file, a function or a Cloud Run service.
type Rewrite struct {
	Source      string      `json:"source"`
	Destination string      `json:"destination,omitempty"`
	Function    string      `json:"function,omitempty"`
	Run         *RunRewrite `json:"run,omitempty"`
}

// RunRewrite is a rewrite to a Cloud Run service.
type RunRewrite struct {
	ServiceID string `json:"serviceId"`
	Region    string `json:"region,omitempty"`
}

// Codebase is one entry of the functions block: a folder of functions in
// one runtime, as firebase-tools reads it.
type Codebase struct {
	// Source is the folder, relative to firebase.json.
	Source string `json:"source,omitempty"`
	// Codebase names it ("default" when absent).
	Codebase string `json:"codebase,omitempty"`
	// Runtime is e.g. "nodejs20", "python311" or "go126"; "" means the one
	// the folder's files tell (go.mod, package.json, main.py).
	Runtime string `json:"runtime,omitempty"`
	// Ignore are globs of files under Source that are not part of it
	// (firebase-tools' default: node_modules, .git, firebase-debug.log).
	Ignore []string `json:"ignore,omitempty"`
}

// Name is the codebase's name, "default" when firebase.json gives none.
func (c Codebase) Name() string {
	if c.Codebase == "" {
		return "default"
	}
	return c.Codebase
}

// Codebases is the functions block in either of firebase.json's forms: one
// object, or an array of codebases.
type Codebases []Codebase

// UnmarshalJSON implements json.Unmarshaler.
func (c *Codebases) UnmarshalJSON(data []byte) error {
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		var one Codebase
		if err := json.Unmarshal(data, &one); err != nil {
			return err
		}
		*c = Codebases{one}
		return nil
	}
	var many []Codebase
	if err := json.Unmarshal(data, &many); err != nil {
		return err
	}
	*c = many
	return nil
}

// Emulators is the emulators block: one Entry per service. Keys whose value is
// not an object (singleProjectMode, for one) are settings, not services, and
// are skipped.
type Emulators map[string]Entry

// UnmarshalJSON implements json.Unmarshaler.
func (e *Emulators) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*e = Emulators{}
	for name, value := range raw {
		if len(value) == 0 || value[0] != '{' {
			continue
		}
		var entry Entry
		if err := json.Unmarshal(value, &entry); err != nil {
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) {
				return fmt.Errorf("emulators.%s.%s must be %s, not %s", name, typ.Field, typ.Type, typ.Value)
			}
			return fmt.Errorf("emulators.%s: %v", name, err)
		}
		(*e)[name] = entry
	}
	return nil
}

// Entry is one service's block under "emulators" (host and port, both optional).
type Entry struct {
	Host    string `json:"host,omitempty"`
	Port    int    `json:"port,omitempty"`
	Enabled *bool  `json:"enabled,omitempty"`
	// Edition is emulators.firestore.edition: the edition of every
	// Firestore database whose own entry names none.
	Edition string `json:"edition,omitempty"`
}

// Load reads and parses path. When required is false a missing file gives an
// empty configuration rooted at the file's folder.
func Load(path string, required bool) (*Firebase, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !required {
		return &Firebase{Dir: filepath.Dir(path)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("resolve config folder: %w", err)
	}
	cfg.Dir = abs
	if cfg.RC, err = loadRC(abs); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Parse decodes firebase.json content, reporting the line and column of a syntax error.
func Parse(data []byte) (*Firebase, error) {
	var cfg Firebase
	if err := json.Unmarshal(data, &cfg); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			line, col := position(data, syn.Offset-1)
			return nil, fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, syn.Error())
		case errors.As(err, &typ):
			line, col := position(data, typ.Offset)
			return nil, fmt.Errorf("line %d, column %d: %q must be %s, not %s", line, col, typ.Field, typ.Type, typ.Value)
		default:
			return nil, err
		}
	}
	if err := cfg.pickDefaults(data); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, cb := range cfg.Functions {
		if cb.Source == "" {
			return nil, fmt.Errorf("functions: codebase %q has no source", cb.Name())
		}
		if names[cb.Name()] {
			return nil, fmt.Errorf("functions: codebase %q is configured twice", cb.Name())
		}
		names[cb.Name()] = true
	}
	var extra struct {
		Emulators struct {
			CORS        json.RawMessage `json:"cors"`
			PassThrough json.RawMessage `json:"passThrough"`
		} `json:"emulators"`
	}
	_ = json.Unmarshal(data, &extra)
	if len(extra.Emulators.CORS) > 0 {
		if err := json.Unmarshal(extra.Emulators.CORS, &cfg.CORS); err != nil {
			return nil, fmt.Errorf("emulators.cors must be a list of origins such as [\"https://app.example\"]")
		}
	}
	if len(extra.Emulators.PassThrough) > 0 {
		if err := json.Unmarshal(extra.Emulators.PassThrough, &cfg.PassThrough); err != nil {
			return nil, fmt.Errorf("emulators.passThrough must be a list of services such as [\"storage\"]")
		}
	}
	for name, e := range cfg.Emulators {
		if e.Port < 0 || e.Port > 65535 {
			return nil, fmt.Errorf("emulators.%s.port %d is out of range", name, e.Port)
		}
	}
	if err := checkEdition("emulators.firestore.edition", cfg.Emulators["firestore"].Edition); err != nil {
		return nil, err
	}
	for _, e := range cfg.FirestoreConfigs {
		if err := checkEdition("firestore.edition", e.Edition); err != nil {
			return nil, err
		}
	}
	return &cfg, nil
}

// The Firestore editions firebase.json can name.
const (
	EditionStandard   = "standard"
	EditionEnterprise = "enterprise"
)

func checkEdition(key, edition string) error {
	switch edition {
	case "", EditionStandard, EditionEnterprise:
		return nil
	}
	return fmt.Errorf("%s %q must be %q or %q", key, edition, EditionStandard, EditionEnterprise)
}

// FirestoreEditions is the edition of each Firestore database firebase.json
// names (by database id), with the edition of databases it does not name
// under "": a database's own entry wins over emulators.firestore.edition,
// and standard is the default.
func (c *Firebase) FirestoreEditions() map[string]string {
	fallback := c.Emulators["firestore"].Edition
	if fallback == "" {
		fallback = EditionStandard
	}
	editions := map[string]string{"": fallback}
	for _, e := range c.FirestoreConfigs {
		if e.Edition == "" {
			continue
		}
		db := e.Database
		if db == "" {
			db = DefaultDatabase
		}
		editions[db] = e.Edition
	}
	return editions
}

// pickDefaults sets Firestore and Storage from the parsed entries, and
// rejects two array entries for the same database or bucket.
func (c *Firebase) pickDefaults(data []byte) error {
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(data, &raw)
	isArray := func(key string) bool {
		v := bytes.TrimSpace(raw[key])
		return len(v) > 0 && v[0] == '['
	}
	seen := map[string]bool{}
	for i := range c.FirestoreConfigs {
		e := &c.FirestoreConfigs[i]
		db := e.Database
		if db == "" {
			db = DefaultDatabase
		}
		if seen[db] {
			return fmt.Errorf("firestore: database %q is configured twice", db)
		}
		seen[db] = true
		if db == DefaultDatabase {
			c.Firestore = e
		}
	}
	if len(c.StorageConfigs) == 1 && !isArray("storage") {
		c.Storage = &c.StorageConfigs[0]
	}
	instances := map[string]bool{}
	for _, e := range c.DatabaseConfigs {
		if e.Instance != "" && instances[e.Instance] {
			return fmt.Errorf("database: instance %q is configured twice", e.Instance)
		}
		instances[e.Instance] = true
	}
	buckets := map[string]bool{}
	for _, e := range c.StorageConfigs {
		if e.Bucket != "" && buckets[e.Bucket] {
			return fmt.Errorf("storage: bucket %q is configured twice", e.Bucket)
		}
		buckets[e.Bucket] = true
	}
	return nil
}

// Path resolves a path from the file against the file's folder.
func (c *Firebase) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.Dir, p)
}

// PublicDir is the hosting public folder, or "" when hosting is not configured.
func (c *Firebase) PublicDir() string {
	if c.Hosting == nil || c.Hosting.Public == "" {
		return ""
	}
	return c.Path(c.Hosting.Public)
}

func position(data []byte, offset int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < offset && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
