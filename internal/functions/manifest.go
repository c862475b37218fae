package functions

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/triggers"
)

// manifest is the functions manifest the Firebase SDKs describe their
// functions with (served at /__/functions.yaml, or written to
// FUNCTIONS_MANIFEST_OUTPUT_PATH), as firebase-tools reads it.
type manifest struct {
	SpecVersion string              `json:"specVersion"`
	Params      []manifestParam     `json:"params"`
	Endpoints   map[string]endpoint `json:"endpoints"`
}

type manifestParam struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Default any    `json:"default"`
}

// endpoint is one function of the manifest.
type endpoint struct {
	Platform   string          `json:"platform"`
	Region     json.RawMessage `json:"region"`
	EntryPoint string          `json:"entryPoint"`

	HTTPSTrigger    *struct{} `json:"httpsTrigger"`
	CallableTrigger *struct{} `json:"callableTrigger"`
	EventTrigger    *struct {
		EventType               string            `json:"eventType"`
		EventFilters            map[string]any    `json:"eventFilters"`
		EventFilterPathPatterns map[string]string `json:"eventFilterPathPatterns"`
		Channel                 string            `json:"channel"`
		Retry                   any               `json:"retry"`
	} `json:"eventTrigger"`
	ScheduleTrigger *struct {
		Schedule    any            `json:"schedule"`
		TimeZone    any            `json:"timeZone"`
		RetryConfig map[string]any `json:"retryConfig"`
	} `json:"scheduleTrigger"`
	TaskQueueTrigger *struct {
		RetryConfig map[string]any `json:"retryConfig"`
		RateLimits  map[string]any `json:"rateLimits"`
	} `json:"taskQueueTrigger"`
	BlockingTrigger *struct {
		EventType string `json:"eventType"`
	} `json:"blockingTrigger"`
}

// celParam matches a manifest value that is one param: {{ params.NAME }}.
var celParam = regexp.MustCompile(`^\{\{\s*params\.([A-Za-z0-9_]+)\s*\}\}$`)

// legacyTypes maps the v1 SDK's event types to the trigger table's.
var legacyTypes = map[string]string{
	"providers/cloud.firestore/eventTypes/document.create":     triggers.Created,
	"providers/cloud.firestore/eventTypes/document.update":     triggers.Updated,
	"providers/cloud.firestore/eventTypes/document.delete":     triggers.Deleted,
	"providers/cloud.firestore/eventTypes/document.write":      triggers.Written,
	"providers/google.firebase.database/eventTypes/ref.create": triggers.DatabaseCreated,
	"providers/google.firebase.database/eventTypes/ref.update": triggers.DatabaseUpdated,
	"providers/google.firebase.database/eventTypes/ref.delete": triggers.DatabaseDeleted,
	"providers/google.firebase.database/eventTypes/ref.write":  triggers.DatabaseWritten,
	"providers/firebase.auth/eventTypes/user.create":           triggers.UserCreated,
	"providers/firebase.auth/eventTypes/user.delete":           triggers.UserDeleted,
	"google.storage.object.finalize":                           triggers.ObjectFinalized,
	"google.storage.object.delete":                             triggers.ObjectDeleted,
	"google.storage.object.archive":                            triggers.ObjectArchived,
	"google.storage.object.metadataUpdate":                     triggers.ObjectMetadataUpdated,
	"google.pubsub.topic.publish":                              triggers.MessagePublished,
	"providers/cloud.pubsub/eventTypes/topic.publish":          triggers.MessagePublished,
}

// blockingEvents maps blocking triggers' event types to Auth's names.
var blockingEvents = map[string]string{
	"providers/cloud.auth/eventTypes/user.beforeCreate":    "beforeCreate",
	"providers/cloud.auth/eventTypes/user.beforeSignIn":    "beforeSignIn",
	"providers/cloud.auth/eventTypes/user.beforeSendEmail": "beforeSendEmail",
	"providers/cloud.auth/eventTypes/user.beforeSendSms":   "beforeSendSms",
}

// functions turns the manifest into the codebase's functions, and the
// params' defaults into environment variables (NAME=value).
func (m *manifest) functions(codebase, runtime string) ([]Function, []string, error) {
	values := map[string]string{}
	var env []string
	for _, p := range m.Params {
		if p.Default == nil || p.Type == "secret" {
			continue
		}
		v := fmt.Sprint(p.Default)
		if s, ok := p.Default.(string); ok && celParam.MatchString(s) {
			continue // a default naming another param: the SDK resolves it
		}
		values[p.Name] = v
		env = append(env, p.Name+"="+v)
	}
	resolve := func(v any) string {
		s := fmt.Sprint(v)
		if v == nil {
			return ""
		}
		if m := celParam.FindStringSubmatch(s); m != nil {
			return values[m[1]]
		}
		return s
	}
	var fns []Function
	names := make([]string, 0, len(m.Endpoints))
	for name := range m.Endpoints {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ep := m.Endpoints[name]
		f := Function{Name: name, Codebase: codebase, Runtime: runtime, Platform: ep.Platform, EntryPoint: ep.EntryPoint,
			Regions: regions(ep.Region, resolve)}
		switch {
		case ep.HTTPSTrigger != nil:
			f.Kind = KindHTTPS
		case ep.CallableTrigger != nil:
			f.Kind = KindCallable
		case ep.BlockingTrigger != nil:
			f.Kind, f.BlockingEvent = KindBlocking, blockingEvents[ep.BlockingTrigger.EventType]
			if f.BlockingEvent == "" {
				return nil, nil, fmt.Errorf("function %s: unknown blocking event %q", name, ep.BlockingTrigger.EventType)
			}
		case ep.ScheduleTrigger != nil:
			f.Kind, f.Schedule, f.TimeZone = KindSchedule, resolve(ep.ScheduleTrigger.Schedule), resolve(ep.ScheduleTrigger.TimeZone)
			f.Policy = triggers.Policy{MaxAttempts: intOf(ep.ScheduleTrigger.RetryConfig["retryCount"], resolve) + 1,
				MaxDoublings: intOf(ep.ScheduleTrigger.RetryConfig["maxDoublings"], resolve)}
			f.Trigger = &triggers.Trigger{Name: name, Source: triggers.Schedule, EventType: triggers.ScheduleRun, Instance: name,
				Retry: f.Policy.MaxAttempts > 1, Policy: f.Policy}
		case ep.TaskQueueTrigger != nil:
			rc, rl := ep.TaskQueueTrigger.RetryConfig, ep.TaskQueueTrigger.RateLimits
			f.Kind = KindTask
			f.Policy = triggers.Policy{
				MaxAttempts:   intOf(rc["maxAttempts"], resolve),
				MinBackoff:    time.Duration(intOf(rc["minBackoffSeconds"], resolve)) * time.Second,
				MaxBackoff:    time.Duration(intOf(rc["maxBackoffSeconds"], resolve)) * time.Second,
				MaxDoublings:  intOf(rc["maxDoublings"], resolve),
				MaxConcurrent: intOf(rl["maxConcurrentDispatches"], resolve),
			}
			if v, err := strconv.ParseFloat(resolve(rl["maxDispatchesPerSecond"]), 64); err == nil {
				f.Policy.MaxPerSecond = v
			}
			// Cloud Tasks' defaults: 3 attempts, backoff from 0.1 s to an hour.
			if f.Policy.MaxAttempts <= 0 {
				f.Policy.MaxAttempts = 3
			}
			f.Trigger = &triggers.Trigger{Name: name, Source: triggers.Tasks, EventType: triggers.TaskDispatched, Instance: name,
				Retry: true, Policy: f.Policy}
		case ep.EventTrigger != nil && (ep.EventTrigger.Channel != "" || ep.EventTrigger.EventType == alertPublished):
			t, err := customEventTrigger(name, ep, f.Regions[0], resolve)
			if err != nil {
				return nil, nil, err
			}
			f.Kind, f.Trigger = KindEvent, t
		case ep.EventTrigger != nil:
			t, err := eventTrigger(name, ep, resolve)
			if err != nil {
				return nil, nil, err
			}
			f.Kind, f.Trigger = KindEvent, t
		default:
			return nil, nil, fmt.Errorf("function %s has no trigger loupe knows", name)
		}
		fns = append(fns, f)
	}
	return fns, env, nil
}

// eventTrigger turns an endpoint's eventTrigger into a trigger of the table.
func eventTrigger(name string, ep endpoint, resolve func(any) string) (*triggers.Trigger, error) {
	et := ep.EventTrigger
	eventType := et.EventType
	if t, ok := legacyTypes[eventType]; ok {
		eventType = t
	}
	src, ok := triggers.SourceOf(eventType)
	if !ok {
		return nil, fmt.Errorf("function %s: loupe does not deliver events of type %q", name, et.EventType)
	}
	t := &triggers.Trigger{Name: name, Source: src, EventType: eventType, Retry: resolve(et.Retry) == "true"}
	filter := func(key string) string {
		if p, ok := et.EventFilterPathPatterns[key]; ok {
			return resolve(p)
		}
		return resolve(et.EventFilters[key])
	}
	resource := filter("resource")
	switch src {
	case triggers.Firestore:
		if resource != "" { // v1: projects/{p}/databases/{d}/documents/{path}
			_, rest, _ := strings.Cut(resource, "/databases/")
			db, doc, ok := strings.Cut(rest, "/documents/")
			if !ok {
				return nil, fmt.Errorf("function %s: unexpected Firestore resource %q", name, resource)
			}
			t.Instance, t.Pattern = db, doc
		} else {
			t.Instance, t.Pattern = cmp.Or(filter("database"), "(default)"), filter("document")
		}
	case triggers.Database:
		if resource != "" { // v1: projects/_/instances/{instance}/refs/{path}
			_, rest, _ := strings.Cut(resource, "/instances/")
			inst, ref, _ := strings.Cut(rest, "/refs/")
			t.Instance, t.Pattern = inst, ref
		} else {
			t.Instance, t.Pattern = cmp.Or(filter("instance"), "*"), filter("ref")
		}
		t.Pattern = strings.Trim(t.Pattern, "/")
	case triggers.Storage:
		if resource != "" { // v1: projects/_/buckets/{bucket}
			_, t.Instance, _ = strings.Cut(resource, "/buckets/")
		} else {
			t.Instance = filter("bucket")
		}
	case triggers.PubSub:
		if resource != "" { // v1: projects/{p}/topics/{topic}
			_, t.Instance, _ = strings.Cut(resource, "/topics/")
		} else {
			t.Instance = filter("topic")
		}
	}
	if err := triggers.Check([]triggers.Trigger{*t}); err != nil {
		return nil, fmt.Errorf("function %s: %w", name, err)
	}
	return t, nil
}

// customEventTrigger turns an endpoint whose eventTrigger names a channel
// (onCustomEventPublished) or is for Firebase Alerts (onAlertPublished and
// the like, which name none) into an Eventarc trigger: its events are those
// of its type published to that channel in the function's project (a bare
// channel id is in the function's region), or to the native channel, whose
// attributes match its eventFilters.
func customEventTrigger(name string, ep endpoint, region string, resolve func(any) string) (*triggers.Trigger, error) {
	et := ep.EventTrigger
	var filters map[string]string
	for k, v := range et.EventFilters {
		if filters == nil {
			filters = map[string]string{}
		}
		filters[k] = resolve(v)
	}
	t, err := eventarcTrigger(name, et.EventType, resolve(et.Channel), region, filters)
	if err != nil {
		return nil, err
	}
	t.Retry = resolve(et.Retry) == "true"
	return t, nil
}

// regions reads an endpoint's region: a list, one value or absent.
func regions(raw json.RawMessage, resolve func(any) string) []string {
	var list []any
	if json.Unmarshal(raw, &list) != nil {
		var one any
		if json.Unmarshal(raw, &one) == nil && one != nil {
			list = []any{one}
		}
	}
	var out []string
	for _, r := range list {
		if v := resolve(r); v != "" {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		out = []string{triggers.Location}
	}
	return out
}

// intOf reads a manifest number (or a param naming one), 0 when absent.
func intOf(v any, resolve func(any) string) int {
	if v == nil {
		return 0
	}
	n, _ := strconv.ParseFloat(resolve(v), 64)
	return int(n)
}
