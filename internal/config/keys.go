package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// knownKeys are the keys of each object of firebase.json that
// firebase-tools' JSON schema (schema/firebase-config.json, 14.27) names,
// by the object's path (an array's entries share the array's path), plus
// the keys loupe adds (emulators.cors, emulators.passThrough,
// emulators.firestore.edition) and the deprecated top-level "firebase"
// and "rules" that firebase-tools still reads. Objects not listed
// (extensions, frameworksBackend, a header's headers) take any key.
var knownKeys = map[string][]string{
	"": {"$schema", "apphosting", "database", "dataconnect", "emulators", "extensions", "firestore",
		"functions", "hosting", "remoteconfig", "storage", "firebase", "rules"},
	"apphosting":  {"alwaysDeployFromSource", "backendId", "ignore", "localBuild", "rootDir"},
	"database":    {"instance", "postdeploy", "predeploy", "rules", "target"},
	"dataconnect": {"postdeploy", "predeploy", "source", "location"},
	"firestore":   {"database", "edition", "indexes", "location", "postdeploy", "predeploy", "rules", "target"},
	"storage":     {"bucket", "postdeploy", "predeploy", "rules", "target"},
	"functions": {"codebase", "configDir", "disallowLegacyRuntimeConfig", "ignore", "postdeploy", "predeploy",
		"prefix", "remoteSource", "runtime", "source"},
	"functions.remoteSource": {"dir", "ref", "repository"},
	"hosting": {"appAssociation", "cleanUrls", "frameworksBackend", "headers", "i18n", "ignore", "postdeploy",
		"predeploy", "public", "redirects", "rewrites", "site", "source", "target", "trailingSlash"},
	"hosting.rewrites":          {"destination", "dynamicLinks", "function", "glob", "regex", "region", "run", "source"},
	"hosting.rewrites.function": {"functionId", "pinTag", "region"},
	"hosting.rewrites.run":      {"pinTag", "region", "serviceId"},
	"hosting.redirects":         {"destination", "glob", "regex", "source", "type"},
	"hosting.headers":           {"glob", "headers", "regex", "source"},
	"hosting.i18n":              {"root"},
	"remoteconfig":              {"postdeploy", "predeploy", "template"},
	"emulators": {"apphosting", "auth", "database", "dataconnect", "eventarc", "extensions", "firestore",
		"functions", "hosting", "hub", "logging", "pubsub", "singleProjectMode", "storage", "tasks", "ui",
		"cors", "passThrough"},
	"emulators.apphosting":  {"host", "port", "rootDirectory", "startCommand", "startCommandOverride"},
	"emulators.auth":        {"host", "port"},
	"emulators.database":    {"host", "port"},
	"emulators.dataconnect": {"dataDir", "host", "port", "postgresHost", "postgresPort"},
	"emulators.eventarc":    {"host", "port"},
	"emulators.firestore":   {"host", "port", "websocketPort", "edition"},
	"emulators.functions":   {"host", "port"},
	"emulators.hosting":     {"host", "port"},
	"emulators.hub":         {"host", "port"},
	"emulators.logging":     {"host", "port"},
	"emulators.pubsub":      {"host", "port"},
	"emulators.storage":     {"host", "port"},
	"emulators.tasks":       {"host", "port"},
	"emulators.ui":          {"enabled", "host", "port"},
}

// unknownKeys is one note naming every key of raw (a decoded firebase.json)
// that knownKeys does not list, or none.
func unknownKeys(raw map[string]any) []string {
	var unknown []string
	var walk func(v any, schemaPath, shown string)
	walk = func(v any, schemaPath, shown string) {
		switch v := v.(type) {
		case []any:
			for i, item := range v {
				walk(item, schemaPath, fmt.Sprintf("%s[%d]", shown, i))
			}
		case map[string]any:
			known, ok := knownKeys[schemaPath]
			if !ok {
				return
			}
			for key, child := range v {
				name := key
				if shown != "" {
					name = shown + "." + key
				}
				if !slices.Contains(known, key) {
					unknown = append(unknown, name)
					continue
				}
				childPath := key
				if schemaPath != "" {
					childPath = schemaPath + "." + key
				}
				walk(child, childPath, name)
			}
		}
	}
	walk(raw, "", "")
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return []string{"firebase.json: ignoring keys firebase-tools does not know either: " + strings.Join(unknown, ", ")}
}

// notEmulatedProducts are the firebase.json blocks of products firebase-tools
// emulates and loupe does not.
var notEmulatedProducts = []string{"apphosting", "dataconnect", "extensions"}

// notEmulated is one note naming the products firebase.json configures
// (as a block or under "emulators") that loupe does not emulate, or none.
func notEmulated(raw map[string]any) []string {
	emulators, _ := raw["emulators"].(map[string]any)
	var named []string
	for _, p := range notEmulatedProducts {
		_, entry := emulators[p]
		if truthy(raw[p]) || entry {
			named = append(named, p)
		}
	}
	if len(named) == 0 {
		return nil
	}
	return []string{"firebase.json configures " + strings.Join(named, ", ") +
		": loupe does not emulate " + pronoun(len(named)) + " and starts the other services without " + pronoun(len(named))}
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
