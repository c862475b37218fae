// Package config reads firebase.json, the project file that firebase-tools and
// loupe share: emulator ports, rules files, hosting and functions.
//
// It reads the file as firebase-tools does (src/config.ts): comments and
// byte-order marks are allowed (JSONC), an empty file is an empty
// configuration, and the JSON schema is advice, not law: keys firebase-tools
// does not know are noted (Notes) and ignored. A block whose shape loupe
// cannot use is not an error at once: Problem names it for the service the
// block belongs to, so that only a service that starts fails on its own
// block, as firebase-tools validates only the emulators it starts.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Firebase is the parsed firebase.json.
type Firebase struct {
	// Dir is the folder that holds the file; relative paths resolve against it.
	Dir string
	// Firestore is the block of the (default) database: the object form of
	// "firestore", or the array form's entry for "(default)"; nil if none.
	Firestore *RulesConfig
	// Storage is the object form of "storage" (rules for every bucket); nil
	// for the array form or when absent.
	Storage *RulesConfig
	// FirestoreConfigs and StorageConfigs are every entry of "firestore" and
	// "storage": one for the object form, one per database or bucket for the
	// array form.
	FirestoreConfigs RulesConfigs
	StorageConfigs   RulesConfigs
	// DatabaseConfigs are the Realtime Database's rules files: the object
	// form (every instance) or one per instance in the array form (the
	// deprecated top-level "rules" key is the object form's rules).
	DatabaseConfigs RulesConfigs
	// Hosting are the hosting sites: one for the object form, one per
	// entry of the array form.
	Hosting Sites
	// Functions are the codebases, with firebase-tools' defaults applied by
	// Load (source "functions" when that folder exists). FunctionsSet says
	// whether firebase.json has a functions block at all.
	Functions    Codebases
	FunctionsSet bool
	Emulators    Emulators
	// CORS are the origins of pages, besides this machine's, that may call
	// the emulators (emulators.cors, a loupe extension: ["https://app.example"]).
	CORS []string
	// PassThrough are the services loupe forwards to production instead of
	// emulating (emulators.passThrough, a loupe extension: ["storage"]).
	PassThrough []string
	// Project is the deprecated top-level "firebase" key: the project used
	// when neither --project nor .firebaserc names one.
	Project string
	// RC is the .firebaserc beside the file (empty without one).
	RC *RC
	// Notes are what reading found worth one warning at start: keys that
	// neither firebase-tools nor loupe knows, products loupe does not
	// emulate, a .firebaserc that is not JSON.
	Notes []string

	// problems are the mistakes found in each service's block, by service
	// name (Problem).
	problems map[string]error
}

// Problem is the mistake in the part of firebase.json that service uses
// (its block, or its entry under "emulators"), nil when there is none. A
// service that does not start is not held to its block.
func (c *Firebase) Problem(service string) error {
	return c.problems[service]
}

func (c *Firebase) addProblem(service string, err error) {
	if c.problems == nil {
		c.problems = map[string]error{}
	}
	if c.problems[service] == nil {
		c.problems[service] = err
	}
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

// RulesConfigs is "firestore", "storage" or "database" in either of
// firebase.json's forms: one object, or an array of objects.
type RulesConfigs []RulesConfig

// UnmarshalJSON implements json.Unmarshaler.
func (c *RulesConfigs) UnmarshalJSON(data []byte) error {
	return unmarshalOneOrMany(data, (*[]RulesConfig)(c))
}

// unmarshalOneOrMany decodes an object as a list of one, or an array.
func unmarshalOneOrMany[T any](data []byte, list *[]T) error {
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		var one T
		if err := json.Unmarshal(data, &one); err != nil {
			return err
		}
		*list = []T{one}
		return nil
	}
	return json.Unmarshal(data, list)
}

// DefaultDatabase is the Firestore database an entry without one names.
const DefaultDatabase = "(default)"

// Hosting is one hosting site: its public folder and rewrites.
type Hosting struct {
	// Site and Target name the site (the array form names each).
	Site     string    `json:"site,omitempty"`
	Target   string    `json:"target,omitempty"`
	Public   string    `json:"public,omitempty"`
	Rewrites []Rewrite `json:"rewrites,omitempty"`
}

// Name is what names the site: its site, else its target, else its public
// folder.
func (h Hosting) Name() string {
	switch {
	case h.Site != "":
		return h.Site
	case h.Target != "":
		return h.Target
	}
	return h.Public
}

// Sites is the hosting block in either of firebase.json's forms: one site,
// or an array of sites.
type Sites []Hosting

// UnmarshalJSON implements json.Unmarshaler.
func (s *Sites) UnmarshalJSON(data []byte) error {
	return unmarshalOneOrMany(data, (*[]Hosting)(s))
}

// Rewrite maps the paths a glob (Source, or "glob") or a regular
// expression (Regex, RE2, matched anywhere in the path) selects to a
// destination file, a function or a Cloud Run service.
type Rewrite struct {
	Source      string `json:"source,omitempty"`
	Regex       string `json:"regex,omitempty"`
	Destination string `json:"destination,omitempty"`
	// Function is the function's id: "function" as a string, or the
	// functionId of its object form.
	Function string      `json:"function,omitempty"`
	Run      *RunRewrite `json:"run,omitempty"`
}

// UnmarshalJSON reads "glob" as Source (it wins over "source", as in
// Hosting's superstatic) and "function" in its string or object form.
func (r *Rewrite) UnmarshalJSON(data []byte) error {
	type plain Rewrite
	var in struct {
		plain
		Glob     string          `json:"glob"`
		Function json.RawMessage `json:"function"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*r = Rewrite(in.plain)
	if in.Glob != "" {
		r.Source = in.Glob
	}
	if len(in.Function) == 0 || string(in.Function) == "null" {
		return nil
	}
	if in.Function[0] == '{' {
		var ref struct {
			FunctionID string `json:"functionId"`
		}
		if err := json.Unmarshal(in.Function, &ref); err != nil {
			return err
		}
		r.Function = ref.FunctionID
		return nil
	}
	return json.Unmarshal(in.Function, &r.Function)
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
	// RemoteSource is a repository firebase-tools deploys from; the
	// emulators cannot run it.
	RemoteSource json.RawMessage `json:"remoteSource,omitempty"`
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
	return unmarshalOneOrMany(data, (*[]Codebase)(c))
}

// DefaultFunctionsSource is the folder a codebase without source or
// remoteSource gets when it exists (firebase-tools'
// Config.DEFAULT_FUNCTIONS_SOURCE).
const DefaultFunctionsSource = "functions"

// Emulators is the emulators block: one Entry per service. Keys whose value is
// not an object (singleProjectMode, for one) are settings, not services.
type Emulators map[string]Entry

// Entry is one service's block under "emulators" (host and port, both optional).
type Entry struct {
	Host string `json:"host,omitempty"`
	// Port is the port firebase.json names, 0 for none. firebase-tools
	// reads it with parseInt: a number or a string of digits.
	Port    Port  `json:"port,omitempty"`
	Enabled *bool `json:"enabled,omitempty"`
	// Edition is emulators.firestore.edition: the edition of every
	// Firestore database whose own entry names none.
	Edition string `json:"edition,omitempty"`
}

// Port is an emulator's port as firebase-tools reads it: a number, or a
// string whose leading digits are one; null, 0 and "" name none.
type Port int

// UnmarshalJSON implements json.Unmarshaler.
func (p *Port) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
		*p = 0
		return nil
	case float64:
		*p = Port(int(v))
		return nil
	case string:
		if v == "" {
			*p = 0
			return nil
		}
		s := strings.TrimSpace(v)
		end := 0
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		if n, err := strconv.Atoi(s[:end]); err == nil {
			*p = Port(n)
			return nil
		}
	}
	return &json.UnmarshalTypeError{Value: jsonKind(v), Type: reflect.TypeFor[int]()}
}

// jsonKind names the JSON type of a decoded value, as encoding/json does.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "number"
}

// FileName is the name of the project file.
const FileName = "firebase.json"

// Locate is the firebase.json firebase-tools uses when no --config is
// given: the one in dir or its nearest parent folder holding one (so that
// a command run in functions/ finds the project's), or dir's own path when
// none has one.
func Locate(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Join(dir, FileName)
	}
	for d := abs; ; {
		if info, err := os.Stat(filepath.Join(d, FileName)); err == nil && !info.IsDir() {
			return filepath.Join(d, FileName)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return filepath.Join(abs, FileName)
		}
		d = parent
	}
}

// Load reads and parses path, applying firebase-tools' defaults that depend
// on the folder (a functions block without source uses the functions
// folder when it exists), and reads the .firebaserc beside it. When
// required is false a missing file gives an empty configuration rooted at
// the current folder, with its .firebaserc.
func Load(path string, required bool) (*Firebase, error) {
	data, err := os.ReadFile(path)
	missing := errors.Is(err, fs.ErrNotExist) && !required
	if err != nil && !missing {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg := &Firebase{}
	if !missing {
		if cfg, err = Parse(data); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("resolve config folder: %w", err)
	}
	cfg.Dir = abs
	cfg.defaultFunctionsSource()
	var note string
	if cfg.RC, note, err = loadRC(abs); err != nil {
		return nil, err
	}
	if note != "" {
		cfg.Notes = append(cfg.Notes, note)
	}
	return cfg, nil
}

// Parse decodes firebase.json content (JSONC), reporting the line and column
// of a syntax error. A file that is not JSON, or not an object, is an error;
// a block of the wrong shape is a Problem of its service.
func Parse(data []byte) (*Firebase, error) {
	cfg := &Firebase{}
	if len(data) == 0 {
		return cfg, nil // firebase-tools reads an empty file as {}
	}
	data = JSONC(data)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			line, col := position(data, syn.Offset-1)
			return nil, fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, syn.Error())
		case errors.As(err, &typ):
			return nil, fmt.Errorf("firebase.json must be an object, not %s", typ.Value)
		default:
			return nil, err
		}
	}
	var raw map[string]any
	_ = json.Unmarshal(data, &raw)
	cfg.Notes = append(cfg.Notes, unknownKeys(raw)...)
	cfg.Notes = append(cfg.Notes, notEmulated(raw)...)
	if project, ok := raw["firebase"].(string); ok && project != "" {
		cfg.Project = project
		cfg.Notes = append(cfg.Notes, `the "firebase" key in firebase.json is deprecated: name the project in .firebaserc (firebase use --add)`)
	}
	blocks := []struct {
		key, service string
		into         any
	}{
		{"firestore", "firestore", &cfg.FirestoreConfigs},
		{"storage", "storage", &cfg.StorageConfigs},
		{"database", "database", &cfg.DatabaseConfigs},
		{"hosting", "hosting", &cfg.Hosting},
		{"functions", "functions", &cfg.Functions},
	}
	for _, b := range blocks {
		value, ok := top[b.key]
		if !ok || !truthy(raw[b.key]) {
			continue // firebase-tools skips a block that is false, null, 0 or ""
		}
		if b.key == "functions" {
			cfg.FunctionsSet = true
		}
		if err := json.Unmarshal(value, b.into); err != nil {
			cfg.addProblem(b.service, blockError(data, b.key, value, err))
		}
	}
	if rules, ok := raw["rules"].(string); ok && rules != "" && cfg.Problem("database") == nil {
		// The deprecated top-level "rules" are the Realtime Database's.
		switch len(cfg.DatabaseConfigs) {
		case 0:
			cfg.DatabaseConfigs = RulesConfigs{{Rules: rules}}
		case 1:
			cfg.DatabaseConfigs[0].Rules = rules
		}
	}
	if value, ok := top["emulators"]; ok {
		cfg.parseEmulators(value)
	}
	_, storageIsObject := raw["storage"].(map[string]any)
	cfg.pickDefaults(storageIsObject)
	if err := checkEdition("emulators.firestore.edition", cfg.Emulators["firestore"].Edition); err != nil {
		cfg.addProblem("firestore", err)
	}
	for _, e := range cfg.FirestoreConfigs {
		if err := checkEdition("firestore.edition", e.Edition); err != nil {
			cfg.addProblem("firestore", err)
		}
	}
	if err := cfg.loupeExtensions(top["emulators"]); err != nil {
		return nil, err
	}
	return cfg, nil
}

// truthy is JavaScript's truthiness of a decoded JSON value: firebase-tools
// reads a block only when it is truthy.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case float64:
		return v != 0
	case string:
		return v != ""
	}
	return true
}

// blockError words the mistake of a block: a string where firebase-tools
// would import a file, or the field whose type is wrong.
func blockError(data []byte, key string, value json.RawMessage, err error) error {
	if trimmed := bytes.TrimSpace(value); len(trimmed) > 0 && trimmed[0] == '"' {
		return fmt.Errorf("firebase.json: %q is a file name; loupe reads the %s block only written out in firebase.json", key, key)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		field := key
		if typ.Field != "" {
			field = key + "." + typ.Field
		}
		return fmt.Errorf("firebase.json: %q must be %s, not %s", field, typeName(typ), typ.Value)
	}
	return fmt.Errorf("firebase.json: %s: %w", key, err)
}

// typeName is the JSON name of the Go type a value should have had.
func typeName(typ *json.UnmarshalTypeError) string {
	switch k := typ.Type.Kind().String(); {
	case k == "string":
		return "a string"
	case k == "slice":
		return "an array"
	case k == "struct" || k == "map":
		return "an object"
	case k == "bool":
		return "true or false"
	case strings.HasPrefix(k, "int") || strings.HasPrefix(k, "float"):
		return "a number"
	default:
		return typ.Type.String()
	}
}

// parseEmulators reads each service's entry; an entry of the wrong shape
// is a Problem of its service.
func (c *Firebase) parseEmulators(data json.RawMessage) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		c.addProblem("emulators", fmt.Errorf("firebase.json: \"emulators\" must be an object"))
		return
	}
	c.Emulators = Emulators{}
	for name, value := range raw {
		if len(value) == 0 || value[0] != '{' {
			continue
		}
		var entry Entry
		if err := json.Unmarshal(value, &entry); err != nil {
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) {
				c.addProblem(name, fmt.Errorf("emulators.%s.%s must be %s, not %s", name, typ.Field, typeName(typ), typ.Value))
			} else {
				c.addProblem(name, fmt.Errorf("emulators.%s: %v", name, err))
			}
			continue
		}
		if entry.Port < 0 || entry.Port > 65535 {
			c.addProblem(name, fmt.Errorf("emulators.%s.port %d is out of range", name, entry.Port))
			continue
		}
		c.Emulators[name] = entry
	}
}

// loupeExtensions reads emulators.cors and emulators.passThrough, loupe's
// own keys, which apply to every service: a wrong shape is an error.
func (c *Firebase) loupeExtensions(emulators json.RawMessage) error {
	var extra struct {
		CORS        json.RawMessage `json:"cors"`
		PassThrough json.RawMessage `json:"passThrough"`
	}
	_ = json.Unmarshal(emulators, &extra)
	if len(extra.CORS) > 0 {
		if err := json.Unmarshal(extra.CORS, &c.CORS); err != nil {
			return fmt.Errorf("emulators.cors must be a list of origins such as [\"https://app.example\"]")
		}
	}
	if len(extra.PassThrough) > 0 {
		if err := json.Unmarshal(extra.PassThrough, &c.PassThrough); err != nil {
			return fmt.Errorf("emulators.passThrough must be a list of services such as [\"storage\"]")
		}
	}
	return nil
}

// defaultFunctionsSource gives a codebase without source or remoteSource
// the functions folder when it exists, as firebase-tools' Config does: the
// object form's codebase, or the array form's first such entry only.
func (c *Firebase) defaultFunctionsSource() {
	if !c.FunctionsSet || c.problems["functions"] != nil {
		return
	}
	if info, err := os.Stat(c.Path(DefaultFunctionsSource)); err != nil || !info.IsDir() {
		return
	}
	for i := range c.Functions {
		if cb := &c.Functions[i]; cb.Source == "" && len(cb.RemoteSource) == 0 {
			cb.Source = DefaultFunctionsSource
			return
		}
	}
}

// FunctionsError is why the functions emulator cannot run this functions
// block, as firebase-tools' normalizeAndValidate and the emulator's
// requireLocal judge it (firebase-tools then starts every other emulator
// without functions); nil when it can, or when there is no block.
func (c *Firebase) FunctionsError() error {
	if !c.FunctionsSet {
		return nil
	}
	if err := c.problems["functions"]; err != nil {
		return err
	}
	if len(c.Functions) == 0 {
		return toolsMessage("Requires at least one functions.source in firebase.json.")
	}
	names, sources := map[string]bool{}, map[string]bool{}
	for _, cb := range c.Functions {
		switch {
		case cb.Source != "" && len(cb.RemoteSource) > 0:
			return toolsMessage("Cannot specify both 'source' and 'remoteSource' in a single functions config. Please choose one.")
		case len(cb.RemoteSource) > 0:
			return toolsMessage("Remote sources are not supported in the Functions emulator.")
		case cb.Source == "":
			return toolsMessage("codebase source must be specified. Must specify either 'source' or 'remoteSource' in a functions config.")
		}
		if !validCodebase(cb.Name()) {
			return toolsMessage("Invalid codebase name. Codebase must be less than 64 characters and can contain only lowercase letters, numeric characters, underscores, and dashes.")
		}
		if names[cb.Name()] {
			return toolsMessage("functions.codebase must be unique but '%s' was used more than once.", cb.Name())
		}
		names[cb.Name()] = true
		if sources[cb.Source] {
			return toolsMessage("More than one functions config specifies the same source directory ('%s') and prefix (''). Please add a unique 'prefix' to each function configuration that shares this source to resolve the conflict.", cb.Source)
		}
		sources[cb.Source] = true
	}
	return nil
}

// validCodebase reports whether name is 1 to 63 of a-z, 0-9, _ and -.
func validCodebase(name string) bool {
	if name == "" || len(name) > 63 {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' && r != '-' {
			return false
		}
	}
	return true
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
	if fallback == "" || checkEdition("", fallback) != nil {
		fallback = EditionStandard
	}
	editions := map[string]string{"": fallback}
	for _, e := range c.FirestoreConfigs {
		if e.Edition == "" || checkEdition("", e.Edition) != nil {
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

// pickDefaults sets Firestore and Storage from the parsed entries; two
// entries for the same database, bucket or instance are a Problem of
// their service.
func (c *Firebase) pickDefaults(storageIsObject bool) {
	seen := map[string]bool{}
	for i := range c.FirestoreConfigs {
		e := &c.FirestoreConfigs[i]
		db := e.Database
		if db == "" {
			db = DefaultDatabase
		}
		if seen[db] {
			c.addProblem("firestore", fmt.Errorf("firestore: database %q is configured twice", db))
		}
		seen[db] = true
		if db == DefaultDatabase && c.Firestore == nil {
			c.Firestore = e
		}
	}
	if storageIsObject && len(c.StorageConfigs) == 1 {
		c.Storage = &c.StorageConfigs[0]
	}
	instances := map[string]bool{}
	for _, e := range c.DatabaseConfigs {
		if e.Instance != "" && instances[e.Instance] {
			c.addProblem("database", fmt.Errorf("database: instance %q is configured twice", e.Instance))
		}
		instances[e.Instance] = true
	}
	buckets := map[string]bool{}
	for _, e := range c.StorageConfigs {
		if e.Bucket != "" && buckets[e.Bucket] {
			c.addProblem("storage", fmt.Errorf("storage: bucket %q is configured twice", e.Bucket))
		}
		buckets[e.Bucket] = true
	}
}

// Path resolves a path from the file against the file's folder.
func (c *Firebase) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.Dir, p)
}

// Site is the hosting site loupe serves: the first of the hosting block,
// nil without one.
func (c *Firebase) Site() *Hosting {
	if len(c.Hosting) == 0 {
		return nil
	}
	return &c.Hosting[0]
}

// OnlySites is the configuration with the hosting sites named (by site, or
// by target) alone, in the order named, as firebase-tools' --only
// hosting:NAME serves them; a name that is no site's is firebase-tools'
// error.
func (c *Firebase) OnlySites(names []string) (*Firebase, error) {
	var kept Sites
	for _, name := range names {
		i := slices.IndexFunc(c.Hosting, func(h Hosting) bool { return h.Site == name })
		if i < 0 {
			i = slices.IndexFunc(c.Hosting, func(h Hosting) bool { return h.Site == "" && h.Target == name })
		}
		if i < 0 {
			return nil, toolsMessage("Hosting site or target %s not detected in firebase.json", name)
		}
		kept = append(kept, c.Hosting[i])
	}
	only := *c
	only.Hosting = kept
	return &only, nil
}

// PublicDir is the served site's public folder, or "" when hosting is not
// configured.
func (c *Firebase) PublicDir() string {
	if s := c.Site(); s != nil && s.Public != "" {
		return c.Path(s.Public)
	}
	return ""
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

// toolsError is a message in firebase-tools' own words, capitals and final
// stop included, as it prints it.
type toolsError string

func (e toolsError) Error() string { return string(e) }

// toolsMessage formats a toolsError.
func toolsMessage(format string, args ...any) error {
	return toolsError(fmt.Sprintf(format, args...))
}
