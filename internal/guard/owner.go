package guard

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/requestlog"
	"github.com/loupe-dev/loupe/internal/rules"
)

// Origins of a rule set: a file named in firebase.json, or a load through an
// emulator endpoint (rules-unit-testing, firebase-tools).
const (
	OriginFile = "file"
	OriginAPI  = "api"
)

// Set is one compiled rule set in force, with where it came from.
type Set struct {
	Service rules.Service
	// Project is the project it applies to; "" for every project.
	Project string
	// Target is the Firestore database or Storage bucket it applies to; ""
	// for every one.
	Target string
	Origin string
	// Ruleset holds the file name (for api loads, the name the caller gave)
	// and the source text.
	Ruleset *rules.Ruleset
	Loaded  time.Time
}

type setKey struct {
	service                 rules.Service
	project, target, origin string
}

// Rules owns every rule set loupe enforces: those named in firebase.json
// (kept current as their files change) and those loaded through the emulator
// endpoints, per project and per Firestore database or Storage bucket.
// Firestore and Storage ask it through the authorizers it hands out; with no
// rule set for a request's project and target, the request is allowed (an
// emulator without rules runs open, as the official one does).
type Rules struct {
	logger *slog.Logger
	log    *requestlog.Log
	mu     sync.RWMutex
	sets   map[setKey]*Set
	// database holds the Realtime Database's rule sets, by namespace.
	database map[dbKey]*DatabaseSet
	// databaseChanged are called after Realtime Database rules change.
	databaseChanged []func()
	// firestore is the engine get() reads in the playground, once known.
	firestore *firestore.Engine
	// missing are the rules files firebase.json names that do not exist
	// (yet), by path, with the service they are for.
	missing map[string]string
}

// MissingFiles are the rules files firebase.json names that do not exist
// now (their service runs open until they appear), by service (firestore,
// storage, database), each list sorted.
func (r *Rules) MissingFiles() map[string][]string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := map[string][]string{}
	for path, service := range r.missing {
		out[service] = append(out[service], path)
	}
	for _, paths := range out {
		slices.Sort(paths)
	}
	return out
}

// setMissing records whether the rules file at path, for service, is missing.
func (r *Rules) setMissing(service, path string, missing bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !missing {
		delete(r.missing, path)
		return
	}
	if r.missing == nil {
		r.missing = map[string]string{}
	}
	r.missing[path] = service
}

// engine is the Firestore engine handed to FirestoreAuthorizer, or nil.
func (r *Rules) engine() *firestore.Engine {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.firestore
}

// New returns an owner holding no rules, recording its decisions in log.
func New(logger *slog.Logger, log *requestlog.Log) *Rules {
	if logger == nil {
		logger = slog.Default()
	}
	return &Rules{logger: logger, log: log, sets: map[setKey]*Set{}, database: map[dbKey]*DatabaseSet{}}
}

// rulesReloadInterval is how often rules files are checked for changes.
const rulesReloadInterval = 500 * time.Millisecond

// ErrMissingFile is returned by LoadConfig in strict mode for a rules file
// that firebase.json names and that does not exist.
var ErrMissingFile = errors.New("named in firebase.json, does not exist")

// LoadConfig loads the rules files firebase.json names for the services
// enabled (firestore, storage, database) and reloads each when it changes while ctx
// lives. A file that does not compile is an error; a file that does not exist
// is a warning and the database or bucket runs open until it appears, or an
// error wrapping ErrMissingFile when strict.
func (r *Rules) LoadConfig(ctx context.Context, cfg *config.Firebase, enabled func(service string) bool, strict bool) error {
	type file struct {
		service rules.Service
		target  string
		path    string
	}
	var files []file
	if enabled("firestore") {
		for _, c := range cfg.FirestoreConfigs {
			if c.Rules == "" {
				continue
			}
			db := c.Database
			if db == "" {
				db = config.DefaultDatabase
			}
			files = append(files, file{rules.Firestore, db, cfg.Path(c.Rules)})
		}
	}
	if enabled("storage") {
		for _, c := range cfg.StorageConfigs {
			if c.Rules == "" {
				continue
			}
			if c.Bucket == "" && c.Target != "" {
				return fmt.Errorf("storage: deploy target %q is not resolved to buckets (config.Firebase.ResolveStorageTargets)", c.Target)
			}
			files = append(files, file{rules.Storage, c.Bucket, cfg.Path(c.Rules)})
		}
	}
	for _, f := range files {
		if err := r.watch(ctx, f.service, f.target, f.path, strict); err != nil {
			return err
		}
	}
	if enabled("database") {
		return r.loadDatabaseConfig(ctx, cfg, strict)
	}
	return nil
}

// watch loads one rules file for every project and keeps it current. The
// check phase's warnings are logged at each load; with strict, a file with
// warnings is refused as one that does not compile is (at start an error,
// later the last good rules stay in force).
func (r *Rules) watch(ctx context.Context, service rules.Service, target, path string, strict bool) error {
	compile := func(src []byte, path string) (*rules.Ruleset, error) {
		rs, err := rules.Compile(string(src), path)
		if err == nil && strict && len(rs.Issues) > 0 {
			return nil, &IssuesError{File: path, Issues: rs.Issues}
		}
		return rs, err
	}
	w, err := NewWatcher(path, compile)
	what := map[rules.Service]string{rules.Firestore: "Firestore", rules.Storage: "Storage"}[service]
	switch {
	case target == "":
	case service == rules.Firestore && target != config.DefaultDatabase:
		what += " database " + target
	case service == rules.Storage:
		what += " bucket " + target
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if strict {
			return fmt.Errorf("%s rules file %s, %w", what, path, ErrMissingFile)
		}
		r.logger.Warn(fmt.Sprintf("%s rules file %s named in firebase.json does not exist: %s runs open, allowing every read and write, until the file appears (--strict makes this an error)",
			what, path, what), "file", path)
		r.setMissing(string(service), path, true)
	case err != nil:
		return err
	default:
		r.installFile(service, target, path, w.Ruleset())
	}
	go w.Run(ctx, rulesReloadInterval, func(err error) {
		if err != nil {
			r.logger.Error("rules not reloaded; the last good rules stay in force", "file", path, "err", err)
			return
		}
		r.installFile(service, target, path, w.Ruleset())
		r.setMissing(string(service), path, false)
		r.logger.Info("rules reloaded", "file", path)
	})
	return nil
}

// installFile puts the rules of a file in force for every project, logging
// the check phase's warnings as firebase-tools prints them at deploy.
func (r *Rules) installFile(service rules.Service, target, path string, rs *rules.Ruleset) {
	for _, issue := range rs.Issues {
		r.logger.Warn(fmt.Sprintf("%s %s (loupe serve --strict refuses rules with warnings)", path, issue), "file", path)
	}
	r.install(service, "", target, OriginFile, rs)
}

// IssuesError is a rules file refused for the warnings of the check phase
// (under --strict): each is "file:line:col: [W] message".
type IssuesError struct {
	File   string
	Issues []rules.Issue
}

func (e *IssuesError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s has %d warning(s), refused under --strict:", e.File, len(e.Issues))
	for _, i := range e.Issues {
		fmt.Fprintf(&b, "\n%s:%d:%d: [%s] %s", e.File, i.Line, i.Col, i.Severity, i.Msg)
	}
	return b.String()
}

// install puts a compiled rule set in force for project and target. Open
// Firestore listeners are judged again by the new rules.
func (r *Rules) install(service rules.Service, project, target, origin string, rs *rules.Ruleset) {
	s := &Set{Service: service, Project: project, Target: target, Origin: origin, Ruleset: rs, Loaded: time.Now().UTC()}
	r.mu.Lock()
	r.sets[setKey{service, project, target, origin}] = s
	r.mu.Unlock()
	if e := r.engine(); e != nil && service == rules.Firestore {
		e.RecheckListeners()
	}
}

// SetFirestore compiles source and puts it in force for project's Firestore
// databases (every project when project is ""), ahead of the files of
// firebase.json. A compile error leaves the rules in force unchanged.
func (r *Rules) SetFirestore(project, name, source string) error {
	rs, err := rules.Compile(source, name)
	if err != nil {
		return err
	}
	if rs.Service != rules.Firestore {
		return fmt.Errorf("%s: a %s ruleset, not cloud.firestore", name, rs.Service)
	}
	r.install(rules.Firestore, project, "", OriginAPI, rs)
	return nil
}

// StorageFile is one rules file for Storage: for the bucket Resource, or for
// every bucket when Resource is "".
type StorageFile struct {
	Resource, Name, Content string
}

// ReplaceStorage compiles files and, if all compile, makes them the only
// Storage rules loaded through the API (as firebase-tools' storage emulator
// replaces its rules); the files of firebase.json stay beneath them.
func (r *Rules) ReplaceStorage(files []StorageFile) error {
	compiled := make([]*rules.Ruleset, len(files))
	for i, f := range files {
		rs, err := rules.Compile(f.Content, f.Name)
		if err != nil {
			return err
		}
		if rs.Service != rules.Storage {
			return fmt.Errorf("%s: a %s ruleset, not firebase.storage", f.Name, rs.Service)
		}
		compiled[i] = rs
	}
	now := time.Now().UTC()
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, s := range r.sets {
		if k.service == rules.Storage && s.Origin == OriginAPI {
			delete(r.sets, k)
		}
	}
	for i, f := range files {
		bucket := strings.TrimPrefix(f.Resource, "projects/_/buckets/")
		r.sets[setKey{rules.Storage, "", bucket, OriginAPI}] = &Set{Service: rules.Storage, Target: bucket, Origin: OriginAPI,
			Ruleset: compiled[i], Loaded: now}
	}
	return nil
}

// Lookup returns the rule set in force for a project's Firestore database or
// Storage bucket, nil when none (the service then runs open). Rules loaded
// through the API win over the files of firebase.json; among each, a set for
// the project wins over one for every project, and one for the database or
// bucket over one for all of them.
func (r *Rules) Lookup(service rules.Service, project, target string) *Set {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, origin := range []string{OriginAPI, OriginFile} {
		for _, k := range []setKey{{service, project, target, origin}, {service, project, "", origin}, {service, "", target, origin}, {service, "", "", origin}} {
			if s := r.sets[k]; s != nil {
				return s
			}
		}
	}
	return nil
}

// Sets returns every rule set in force, sorted by service, project and target.
func (r *Rules) Sets() []*Set {
	r.mu.RLock()
	out := make([]*Set, 0, len(r.sets))
	for _, s := range r.sets {
		out = append(out, s)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Set) int {
		return strings.Compare(string(a.Service)+"\x00"+a.Project+"\x00"+a.Target+"\x00"+a.Origin, string(b.Service)+"\x00"+b.Project+"\x00"+b.Target+"\x00"+b.Origin)
	})
	return out
}
