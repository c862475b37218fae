package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// RC is the .firebaserc beside firebase.json: the project aliases
// (`firebase use --add`) and the deploy targets that firebase.json's array
// forms name ("target" instead of "bucket").
type RC struct {
	// Projects are project ids by alias ("default" among them).
	Projects map[string]string `json:"projects"`
	// Targets are resources by project, then kind ("storage", "hosting",
	// …), then target name, as `firebase target:apply` writes them.
	Targets map[string]map[string]map[string][]string `json:"targets"`
}

// loadRC reads dir/.firebaserc as firebase-tools does (JSONC): a folder
// without one has no aliases nor targets, and so has one that is not JSON
// of that shape, which firebase-tools only warns about (the note).
func loadRC(dir string) (rc *RC, note string, err error) {
	path := filepath.Join(dir, ".firebaserc")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &RC{}, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", path, err)
	}
	rc = &RC{}
	if err := json.Unmarshal(JSONC(data), rc); err != nil {
		return &RC{}, fmt.Sprintf("JSON error trying to load %s (%v): loupe reads no project aliases nor targets from it", path, err), nil
	}
	return rc, "", nil
}

// ProjectFor is the project to use, as firebase-tools chooses it: the
// --project value (flag, "" when not given), an alias of .firebaserc
// resolved to its project; else firebase.json's deprecated "firebase"
// key; else .firebaserc's only alias, or its "default" one; else fallback.
func (c *Firebase) ProjectFor(flag, fallback string) string {
	var aliases map[string]string
	if c.RC != nil {
		aliases = c.RC.Projects
	}
	project := flag
	if project == "" {
		project = c.Project
	}
	switch {
	case project != "" && aliases[project] != "":
		return aliases[project]
	case project != "":
		return project
	case len(aliases) == 1:
		for _, id := range aliases {
			return id
		}
	case aliases["default"] != "":
		return aliases["default"]
	}
	return fallback
}

// Target is what the deploy target name of kind names for project, as
// firebase-tools' rc.target answers it (none when unknown).
func (rc *RC) Target(project, kind, name string) []string {
	if rc == nil {
		return nil
	}
	return rc.Targets[project][kind][name]
}

// ResolveStorageTargets turns each entry of firebase.json's "storage" array
// that names a deploy target into one entry per bucket .firebaserc applies
// the target to for project, as firebase-tools' Storage emulator resolves
// them. A target that names no bucket is an error, as in firebase-tools,
// except for a demo project: then, as firebase-tools does, every Storage
// rules file is ignored (the buckets run open) and the warning says so.
func (c *Firebase) ResolveStorageTargets(project string) (warning string, err error) {
	var out RulesConfigs
	for _, e := range c.StorageConfigs {
		if e.Bucket != "" || e.Target == "" {
			out = append(out, e)
			continue
		}
		buckets := c.RC.Target(project, "storage", e.Target)
		if len(buckets) == 0 {
			if strings.HasPrefix(project, "demo-") {
				c.StorageConfigs, c.Storage = nil, nil
				return fmt.Sprintf("Detected demo project ID %q, using a default (open) rules configuration. Storage targets in firebase.json will be ignored.", project), nil
			}
			return "", &UnresolvedTargetError{Target: e.Target, Project: project}
		}
		for _, b := range buckets {
			resolved := e
			resolved.Bucket = b
			out = append(out, resolved)
		}
	}
	seen := map[string]bool{}
	for _, e := range out {
		if e.Bucket != "" && seen[e.Bucket] {
			return "", fmt.Errorf("storage: bucket %q is configured twice", e.Bucket)
		}
		seen[e.Bucket] = true
	}
	c.StorageConfigs = out
	return "", nil
}

// UnresolvedTargetError is a storage deploy target of firebase.json that
// .firebaserc applies to no bucket of the project; it reads as
// firebase-tools' error.
type UnresolvedTargetError struct{ Target, Project string }

func (e *UnresolvedTargetError) Error() string {
	return "Deploy target " + e.Target + " not configured for project " + e.Project +
		". Configure with:\n\n  firebase target:apply storage " + e.Target + " <resources...>"
}
