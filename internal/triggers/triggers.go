// Package triggers is the one trigger table of loupe: event sources
// (Firestore, the Realtime Database, Auth, Storage, Pub/Sub, schedules, task
// queues, Eventarc channels) publish events into it, and it routes each event to every function
// that declared a trigger matching it, whatever the runtime (Go, Node.js,
// Python) that runs the function.
//
// # Publishing
//
// A source calls Table.Publish with Events. An Event names its Source, the
// event Types it is (a Firestore create is both Created and Written, so a
// trigger of either gets it), the Project, the Instance the source's
// triggers filter on (a Firestore database id, a Realtime Database instance,
// a Storage bucket, a Pub/Sub topic, a scheduled or task-queue function's
// name, an Eventarc channel's full name or "google", firebase-tools' native
// channel of Google's own events), the Resource within it that trigger patterns match (a document or ref
// path without a leading slash, an object name), the Time it happened and its
// Data in the source's JSON form:
//
//	Firestore  DocumentEventData as JSON: {"value": Document, "oldValue": Document}, protojson
//	Database   {"data": the value before (null when none), "delta": the change (null for a delete; children set to null were removed)}
//	Auth       the user as the Admin SDK's UserRecord JSON (uid, email, metadata.creationTime, …)
//	Storage    the object's GCS JSON resource (bucket, name, generation, metadata, …)
//	PubSub     {"message": {"data": base64, "attributes", "messageId", "publishTime", "orderingKey"}, "subscription"}
//	Schedule   {} (the run of a scheduled function)
//	Tasks      the task's body as the function would get it over HTTP ({"data": …})
//	Eventarc   the published CloudEvent's data: JSON, or a JSON string for text
//
// Auth, when the source knows who made the change, says so (Firestore's
// …WithAuthContext triggers and database triggers' context.auth read it).
// For the Realtime Database, nil means the Admin SDK (or the owner)
// wrote it; a Principal of Type "unauthenticated" a client with no user;
// Type "app_user" with the uid as ID and the token's claims as Token, a
// signed-in user.
//
// The Realtime Database publishes for each write one Event with Source
// Database, Instance the database name (e.g. "demo-loupe-default-rtdb") and
// the write itself (Event.Write): as production does, a trigger on
// "users/{uid}" gets one event for each user whose data the write changed,
// whether it was written below ("users/u1/name"), at or above ("users", the
// root, a multi-path update), with Resource the user's path ("users/u1"),
// Types {DatabaseWritten, and DatabaseCreated, DatabaseUpdated or
// DatabaseDeleted} and the data at that path. Every runtime then delivers it
// as its SDK expects (v1 database.ref().onWrite(change, context), v2
// onValueWritten(event)).
//
// # Declaring
//
// A runtime declares its functions' triggers with SetTriggers(owner, …), one
// owner per codebase, replacing that owner's earlier list. A Trigger names
// its Project (it gets the events of that project only), its Source, EventType, an Instance ("" or "*" for any) and a Pattern over
// the resource ("users/{uid}", {x=**} for any depth; "" for any), and carries
// the Deliverer that hands an event to its function in the shape the
// function's runtime and SDK version expect.
//
// # Delivering
//
// Delivery is at least once: an attempt that gets no answer (the function's
// process is down, restarting, or unreachable) is always retried with
// exponential backoff; one the function itself fails (a non-2xx answer: it
// threw) is retried only when the trigger asks for it (Retry, as a function
// deployed with retry: true), up to the trigger's Policy or the table's
// MaxAttempts. Events of one resource reach one trigger in publish order;
// different resources are delivered concurrently, at most MaxConcurrent at
// once and MaxPerSecond a second per trigger when it sets them (task queues'
// rate limits). Every attempt is kept in a bounded log.
//
// Background triggers can be disabled and enabled again, as the Emulator
// Hub's disableBackgroundTriggers and enableBackgroundTriggers switch them in
// firebase-tools (see Disable); this applies to every source and runtime.
//
// An owner's functions can go away: Unavailable(owner) makes its deliveries
// under way and every later attempt fail at once with the reason given (each
// failure is recorded and retried as any other), until SetTriggers names the
// owner's replacement; Retired waits for the deliveries to the old ones to
// return.
package triggers

import (
	"context"
	"fmt"
	"time"
)

// Source is the kind of service an event comes from.
type Source string

// The event sources.
const (
	Firestore Source = "firestore"
	Database  Source = "database"
	Auth      Source = "auth"
	Storage   Source = "storage"
	PubSub    Source = "pubsub"
	Schedule  Source = "schedule"
	Tasks     Source = "tasks"
	// Eventarc is custom events published to a channel, and Google's own
	// events (Firebase Alerts) published to the native channel: their
	// types are the publisher's (any type is of this source).
	Eventarc Source = "eventarc"
)

// Event types, as Eventarc names them (CloudEvent types).
const (
	Created = "google.cloud.firestore.document.v1.created"
	Updated = "google.cloud.firestore.document.v1.updated"
	Deleted = "google.cloud.firestore.document.v1.deleted"
	Written = "google.cloud.firestore.document.v1.written"

	// AuthContext is the suffix of the …WithAuthContext variants of the
	// Firestore types: the same events, with the principal that made them.
	AuthContext = ".withAuthContext"

	DatabaseCreated = "google.firebase.database.ref.v1.created"
	DatabaseUpdated = "google.firebase.database.ref.v1.updated"
	DatabaseDeleted = "google.firebase.database.ref.v1.deleted"
	DatabaseWritten = "google.firebase.database.ref.v1.written"

	UserCreated = "google.firebase.auth.user.v1.created"
	UserDeleted = "google.firebase.auth.user.v1.deleted"

	ObjectFinalized       = "google.cloud.storage.object.v1.finalized"
	ObjectDeleted         = "google.cloud.storage.object.v1.deleted"
	ObjectArchived        = "google.cloud.storage.object.v1.archived"
	ObjectMetadataUpdated = "google.cloud.storage.object.v1.metadataUpdated"

	MessagePublished = "google.cloud.pubsub.topic.v1.messagePublished"

	// ScheduleRun and TaskDispatched are loupe's names for the run of a
	// scheduled function and a task-queue function's task (production calls
	// both over HTTP, with no CloudEvent).
	ScheduleRun    = "loupe.schedule.run"
	TaskDispatched = "loupe.tasks.dispatched"
)

// eventSources maps each event type to its source.
var eventSources = map[string]Source{
	Created: Firestore, Updated: Firestore, Deleted: Firestore, Written: Firestore,
	Created + AuthContext: Firestore, Updated + AuthContext: Firestore,
	Deleted + AuthContext: Firestore, Written + AuthContext: Firestore,
	DatabaseCreated: Database, DatabaseUpdated: Database, DatabaseDeleted: Database, DatabaseWritten: Database,
	UserCreated: Auth, UserDeleted: Auth,
	ObjectFinalized: Storage, ObjectDeleted: Storage, ObjectArchived: Storage, ObjectMetadataUpdated: Storage,
	MessagePublished: PubSub,
	ScheduleRun:      Schedule,
	TaskDispatched:   Tasks,
}

// SourceOf returns the source of an event type, and false for a type loupe
// does not deliver.
func SourceOf(eventType string) (Source, bool) {
	s, ok := eventSources[eventType]
	return s, ok
}

// Event is one thing that happened in a source.
type Event struct {
	// ID is unique per event; redeliveries keep it, so functions can dedupe.
	ID     string
	Source Source
	// Types are the event types it is: a trigger of any of them gets it.
	// For Firestore, the …WithAuthContext types need not be listed.
	Types   []string
	Project string
	// Instance is what triggers filter on besides the resource (see the
	// package doc); Resource is the path within it.
	Instance string
	Resource string
	Time     time.Time
	// Data is the payload in the source's JSON form (see the package doc).
	Data []byte
	// Auth is who made the change, when the source knows; nil otherwise.
	Auth *Principal
	// Attributes, on an Eventarc event, are the published CloudEvent's
	// attributes besides id, type and time (source, subject, specversion,
	// datacontenttype and its extensions), which its triggers' Filters
	// match and its CloudEvent carries.
	Attributes map[string]string
	// Write, on a Realtime Database event, is the write itself: each
	// database trigger then gets one event per location its ref pattern
	// matches at or above or below the written paths whose data changed,
	// with that location as Resource and the Types and Data the write has
	// there (DataWrite); Resource, Types and Data of the published event
	// are not used. Without it a database event matches as any other, by
	// its Resource.
	Write DataWrite
}

// Principal is who caused an event, as Firestore's authtype/authid
// attributes and the Realtime Database's context.auth tell it.
type Principal struct {
	// Type is Firestore's authtype ("unauthenticated", "api_key",
	// "service_account", "unknown") or the Realtime Database's ("admin",
	// "app_user", "unauthenticated").
	Type string `json:"type"`
	// ID is the user's uid or the service account's email, or "".
	ID string `json:"id,omitempty"`
	// Token is the decoded ID token claims of a signed-in user, when known.
	Token map[string]any `json:"token,omitempty"`
}

// is reports whether the event is of the given type.
func (e Event) is(eventType string) bool {
	base := eventType
	if e.Source == Firestore && len(eventType) > len(AuthContext) && eventType[len(eventType)-len(AuthContext):] == AuthContext {
		base = eventType[:len(eventType)-len(AuthContext)]
	}
	for _, t := range e.Types {
		if t == base {
			return true
		}
	}
	return false
}

// Deliverer hands an event to the function behind a trigger, in the shape
// its runtime and SDK expect. It returns the status the function answered
// with (0 when no answer came) and an error when no answer came; ctx ends
// when the owner is declared Unavailable or the table closes.
type Deliverer interface {
	Deliver(ctx context.Context, t Trigger, e Event) (status int, err error)
}

// Trigger routes matching events to a function.
type Trigger struct {
	// Name is the function's name, unique in its owner.
	Name string `json:"name"`
	// Project is the project the function belongs to: it gets the events
	// of that project only, as a deployed function does ("" is any).
	Project   string `json:"project,omitempty"`
	Source    Source `json:"source"`
	EventType string `json:"eventType"`
	// Instance is the Firestore database, Realtime Database instance,
	// bucket, topic or function name the trigger is for; "" or "*" is any.
	Instance string `json:"instance,omitempty"`
	// Pattern is the resource path pattern, e.g.
	// "feedbackRequests/{r}/comments/{c}" or "users/{path=**}"; "" is any.
	Pattern string `json:"pattern,omitempty"`
	// Filters, on an Eventarc trigger, are the attribute values its events
	// must have (the function's eventFilters).
	Filters map[string]string `json:"filters,omitempty"`
	// Retry redelivers an event the function failed (it answered with an
	// error status), as a function deployed with retry: true.
	Retry bool `json:"retry"`
	// Policy bounds the retries; the zero value is the table's defaults.
	Policy Policy `json:"policy"`
	// Deliver hands the events to the function.
	Deliver Deliverer `json:"-"`
}

// Policy is a trigger's retry and rate settings (task queues set them all;
// other triggers use the table's defaults).
type Policy struct {
	// MaxAttempts bounds the attempts of one event (0: the table's).
	MaxAttempts int `json:"maxAttempts,omitempty"`
	// MinBackoff is the first retry's delay (0: the table's Backoff),
	// doubled MaxDoublings times (0: always), up to MaxBackoff (0: 10 s).
	MinBackoff   time.Duration `json:"minBackoffNs,omitempty"`
	MaxBackoff   time.Duration `json:"maxBackoffNs,omitempty"`
	MaxDoublings int           `json:"maxDoublings,omitempty"`
	// MaxConcurrent bounds the deliveries under way at once (0: no bound);
	// MaxPerSecond bounds how many start a second (0: no bound).
	MaxConcurrent int     `json:"maxConcurrent,omitempty"`
	MaxPerSecond  float64 `json:"maxPerSecond,omitempty"`
}

// Check reports the first trigger whose pattern does not parse or whose
// event type is unknown or not of its source.
func Check(ts []Trigger) error {
	for _, t := range ts {
		if t.Pattern != "" {
			if _, err := compilePattern(t.Pattern); err != nil {
				return fmt.Errorf("trigger %s: %w", t.Name, err)
			}
		}
		if t.Source == Eventarc {
			if t.EventType == "" {
				return fmt.Errorf("trigger %s: a custom event trigger needs an event type", t.Name)
			}
			continue
		}
		src, ok := SourceOf(t.EventType)
		if !ok {
			return fmt.Errorf("trigger %s: unknown event type %q", t.Name, t.EventType)
		}
		if src != t.Source {
			return fmt.Errorf("trigger %s: event type %q is of source %s, not %s", t.Name, t.EventType, src, t.Source)
		}
	}
	return nil
}

// inProject reports whether e happened in t's project.
func (t Trigger) inProject(e Event) bool { return t.Project == "" || t.Project == e.Project }

// matches reports whether t gets e.
func (t Trigger) matches(e Event, p pattern) bool {
	if t.Source != e.Source || !e.is(t.EventType) {
		return false
	}
	if t.Instance != "" && t.Instance != "*" && t.Instance != e.Instance {
		return false
	}
	for k, v := range t.Filters {
		if e.Attributes[k] != v {
			return false
		}
	}
	return t.Pattern == "" || p.match(e.Resource)
}
