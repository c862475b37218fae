package functions

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/triggers"
)

// The Eventarc Publishing API as the Admin SDK's
// getEventarc().channel(…).publish(…) reaches it through
// CLOUD_EVENTARC_EMULATOR_HOST (firebase-tools' Eventarc emulator path), and
// under /v1 as production serves it:
//
//	POST [/v1]/projects/{p}/locations/{l}/channels/{c}:publishEvents  {"events": [CloudEvent, …]}
//
// The events are CloudEvents in their protobuf JSON form (id, source,
// specVersion, type, attributes of ceString/ceTimestamp/… values, textData
// or binaryData). Each goes through the trigger table to every function of
// the project whose custom-event trigger (onCustomEventPublished, or a Go
// function's triggers.json entry naming a channel) names its type and the
// channel and whose filters its attributes match; the function gets it as a
// CloudEvent whose data is the parsed JSON (application/json) or the text.
//
// Google's own events (Firebase Alerts: onAlertPublished and the
// Crashlytics, App Distribution, Billing and Performance alert triggers)
// come through no channel of the project; firebase-tools' Eventarc emulator
// takes them on its native channel, and so does loupe:
//
//	POST /google/publishEvents  {"events": [CloudEvent, …]}
//
// Those events are CloudEvents in their JSON form (the attributes at the top
// level beside data), and reach every function of loupe's project whose
// trigger is for their type with no channel and whose filters (alerttype,
// appid) their attributes match, as the same JSON CloudEvent.

// maxPublishBody bounds a publishEvents request (production's request limit
// is 512 KB of events; loupe allows more, not unbounded).
const maxPublishBody = 4 << 20

// nativeChannel is the Instance of the events POST /google/publishEvents
// takes (firebase-tools' name for its native channel).
const nativeChannel = "google"

// alertPublished is the type of Firebase Alerts' events, which come through
// the native channel.
const alertPublished = "google.firebase.firebasealerts.alerts.v1.published"

// ChannelInstance is how triggers name an Eventarc channel (the Instance
// of its events and triggers): its location and id, the project being the
// event's own.
func ChannelInstance(location, channel string) string {
	return "locations/" + location + "/channels/" + channel
}

// channelName matches an Eventarc channel's name, with or without its
// project (the Admin SDK's and firebase-tools' CHANNEL_NAME_REGEX).
var channelName = regexp.MustCompile(`^(?:projects/([^/]+)/)?locations/([^/]+)/channels/([^/]+)$`)

// eventarcTrigger is the trigger of function name for the Eventarc events of
// eventType published to channel (a channel's name, or a bare channel id in
// region) whose attributes have the filters' values. With no channel it is
// for Google's events of that type, which only Firebase Alerts' type is
// (they come through the native channel); any other type needs a channel.
func eventarcTrigger(name, eventType, channel, region string, filters map[string]string) (*triggers.Trigger, error) {
	t := &triggers.Trigger{Name: name, Source: triggers.Eventarc, EventType: eventType, Instance: nativeChannel}
	switch {
	case channel != "":
		if !strings.Contains(channel, "/") {
			channel = ChannelInstance(region, channel)
		}
		m := channelName.FindStringSubmatch(channel)
		if m == nil {
			return nil, fmt.Errorf("function %s: invalid channel name %q: give locations/{location}/channels/{channel}", name, channel)
		}
		t.Instance = ChannelInstance(m[2], m[3])
	case eventType != alertPublished:
		return nil, fmt.Errorf("function %s: loupe does not deliver events of type %q (a custom event's trigger names its channel)", name, eventType)
	}
	if len(filters) > 0 {
		t.Filters = filters
	}
	if err := triggers.Check([]triggers.Trigger{*t}); err != nil {
		return nil, fmt.Errorf("function %s: %w", name, err)
	}
	return t, nil
}

// protoCloudEvent is a CloudEvent as the Eventarc Publishing API takes it.
type protoCloudEvent struct {
	ID          string                    `json:"id"`
	Source      string                    `json:"source"`
	SpecVersion string                    `json:"specVersion"`
	Type        string                    `json:"type"`
	Attributes  map[string]map[string]any `json:"attributes"`
	TextData    *string                   `json:"textData"`
	BinaryData  *string                   `json:"binaryData"`
	ProtoData   json.RawMessage           `json:"protoData"`
}

// publishEvents answers POST …/channels/{c}:publishEvents. In strict mode it
// needs the admin credential, as production needs an OAuth token with
// eventarc.events.publish.
func (s *Service) publishEvents(w http.ResponseWriter, r *http.Request) {
	project, location := r.PathValue("project"), r.PathValue("location")
	channel, ok := strings.CutSuffix(r.PathValue("channel"), ":publishEvents")
	if !ok || channel == "" {
		httpjson.Error(w, errs.New(errs.NotFound, "The requested URL was not found on this server."))
		return
	}
	instance := ChannelInstance(location, channel)
	publish(s, w, r, project, func(ce protoCloudEvent) (triggers.Event, error) { return customEvent(ce, project, instance) })
}

// publishNativeEvents answers POST /google/publishEvents: Google's events,
// in the CloudEvents JSON form, for loupe's project. In strict mode it needs
// the admin credential, as publishEvents does.
func (s *Service) publishNativeEvents(w http.ResponseWriter, r *http.Request) {
	project := s.env.ProjectID
	publish(s, w, r, project, func(ce map[string]json.RawMessage) (triggers.Event, error) { return nativeEvent(ce, project) })
}

// maxPublishEvents bounds the events of one publishEvents request, so that
// what a bounded body decodes to stays bounded too (loupe's bound; small
// events cost many times their size once read).
const maxPublishEvents = 10000

// publish answers a publishEvents request of project whose events, of type
// E, read turns into events of the table: {} once all are published, or
// INVALID_ARGUMENT, with nothing published, when the body is no bounded
// {"events": [E, …]} of at most maxPublishEvents or read refuses one of
// them.
func publish[E any](s *Service, w http.ResponseWriter, r *http.Request, project string, read func(E) (triggers.Event, error)) {
	if err := s.env.Credentials.RequireAdmin(r.Header.Get("Authorization"), project); err != nil {
		httpjson.Error(w, err)
		return
	}
	var events []triggers.Event
	err := readEvents(http.MaxBytesReader(w, r.Body, maxPublishBody), func(ce E) error {
		if len(events) == maxPublishEvents {
			return fmt.Errorf("a request publishes at most %d events", maxPublishEvents)
		}
		e, err := read(ce)
		if err == nil {
			events = append(events, e)
		}
		return err
	})
	var bad badEvent
	switch {
	case errors.As(err, &bad):
		httpjson.Error(w, errs.New(errs.InvalidArgument, bad.Error()))
		return
	case err != nil:
		httpjson.Error(w, errs.New(errs.InvalidArgument, "Invalid JSON payload received: "+err.Error()))
		return
	}
	s.Publish(events...)
	httpjson.Write(w, http.StatusOK, map[string]any{})
}

// badEvent is the error take gave readEvents for the event at index.
type badEvent struct {
	index int
	err   error
}

func (b badEvent) Error() string { return fmt.Sprintf("events[%d]: %v", b.index, b.err) }

// readEvents reads body, the one JSON object {"events": [E, …]} (its other
// fields are skipped), handing each event to take as it is read, so that
// no more than one is held in its JSON form; it stops at the first error
// of the JSON, or of take as a badEvent.
func readEvents[E any](body io.Reader, take func(E) error) error {
	dec := json.NewDecoder(body)
	if err := delim(dec, '{'); err != nil {
		return err
	}
	n := 0
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		if key != "events" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		tok, err := dec.Token()
		switch {
		case err != nil:
			return err
		case tok == nil: // "events": null
			continue
		case tok != json.Delim('['):
			return errors.New("events is not a list")
		}
		for dec.More() {
			var ce E
			if err := dec.Decode(&ce); err != nil {
				return err
			}
			if err := take(ce); err != nil {
				return badEvent{n, err}
			}
			n++
		}
		if err := delim(dec, ']'); err != nil {
			return err
		}
	}
	if err := delim(dec, '}'); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

// delim reads the delimiter d.
func delim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err == nil && tok != d {
		err = fmt.Errorf("expected %v, found %v", d, tok)
	}
	return err
}

// customEvent turns a published CloudEvent into an event of the table, or
// says what it lacks.
func customEvent(ce protoCloudEvent, project, instance string) (triggers.Event, error) {
	for field, v := range map[string]string{"id": ce.ID, "source": ce.Source, "specVersion": ce.SpecVersion, "type": ce.Type} {
		if v == "" {
			return triggers.Event{}, fmt.Errorf("CloudEvent '%s' is required", field)
		}
	}
	e := triggers.Event{ID: ce.ID, Source: triggers.Eventarc, Types: []string{ce.Type}, Project: project, Instance: instance,
		Time: time.Now(), Attributes: map[string]string{"source": ce.Source}}
	for name, value := range ce.Attributes {
		v, err := attributeValue(value)
		if err != nil {
			return triggers.Event{}, fmt.Errorf("attribute %s: %v", name, err)
		}
		e.Attributes[name] = v
	}
	if err := settle(&e); err != nil {
		return triggers.Event{}, err
	}
	contentType := e.Attributes["datacontenttype"]
	switch {
	case ce.TextData != nil && isJSONContent(contentType):
		if !json.Valid([]byte(*ce.TextData)) {
			return triggers.Event{}, fmt.Errorf("textData is not the JSON its datacontenttype %s says", contentType)
		}
		e.Data = []byte(*ce.TextData)
	case ce.TextData != nil:
		e.Data, _ = json.Marshal(*ce.TextData)
	case ce.BinaryData != nil:
		raw, err := base64.StdEncoding.DecodeString(*ce.BinaryData)
		if err != nil {
			return triggers.Event{}, fmt.Errorf("binaryData is not base64: %v", err)
		}
		e.Data, _ = json.Marshal(string(raw))
	case len(ce.ProtoData) > 0:
		return triggers.Event{}, fmt.Errorf("protoData is not supported: send textData or binaryData")
	default:
		e.Data = []byte("null")
	}
	return e, checkEvent(e)
}

// isJSONContent reports whether a datacontenttype says the data is JSON.
func isJSONContent(contentType string) bool {
	return strings.HasPrefix(contentType, "application/json")
}

// nativeEvent turns a CloudEvent in its JSON form into an event of the
// table, or says what is wrong with it. As firebase-tools takes it, only
// its type is required (an event without an id gets one); its other
// attributes are strings, numbers or booleans (kept as their text), with
// those of an "attributes" object of the protobuf form beside them; data
// is any JSON, data_base64 bytes (given as text).
func nativeEvent(ce map[string]json.RawMessage, project string) (triggers.Event, error) {
	e := triggers.Event{Source: triggers.Eventarc, Project: project, Instance: nativeChannel, Time: time.Now(),
		Attributes: map[string]string{}, Data: []byte("null")}
	if ce["data"] != nil && ce["data_base64"] != nil {
		return triggers.Event{}, errors.New("a CloudEvent has data or data_base64, not both")
	}
	for name, raw := range ce {
		switch name {
		case "data":
			e.Data = raw
		case "data_base64":
			var text string
			if err := json.Unmarshal(raw, &text); err != nil {
				return triggers.Event{}, errors.New("data_base64 is not a string")
			}
			b, err := base64.StdEncoding.DecodeString(text)
			if err != nil {
				return triggers.Event{}, fmt.Errorf("data_base64 is not base64: %v", err)
			}
			e.Data, _ = json.Marshal(string(b))
		case "specversion", "specVersion", "@type":
			// The version is always 1.0, as the function gets it; @type
			// names the protobuf message of an event in its JSON form.
		case "attributes":
			var attrs map[string]map[string]any
			if err := json.Unmarshal(raw, &attrs); err != nil {
				return triggers.Event{}, errors.New("attributes is not an object of CloudEvent attribute values")
			}
			for k, value := range attrs {
				v, err := attributeValue(value)
				if err != nil {
					return triggers.Event{}, fmt.Errorf("attribute %s: %v", k, err)
				}
				e.Attributes[k] = v
			}
		default:
			v, ok, err := scalarText(raw)
			if err != nil {
				return triggers.Event{}, fmt.Errorf("attribute %s: %v", name, err)
			}
			if ok {
				e.Attributes[name] = v
			}
		}
	}
	e.ID, e.Types = e.Attributes["id"], []string{e.Attributes["type"]}
	delete(e.Attributes, "id")
	delete(e.Attributes, "type")
	if e.Types[0] == "" {
		return triggers.Event{}, errors.New("CloudEvent 'type' is required")
	}
	if e.ID == "" {
		var id [16]byte
		_, _ = rand.Read(id[:])
		e.ID = hex.EncodeToString(id[:])
	}
	if err := settle(&e); err != nil {
		return triggers.Event{}, err
	}
	return e, checkEvent(e)
}

// scalarText is a JSON string, number or boolean as text; false for null.
func scalarText(raw json.RawMessage) (string, bool, error) {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", false, nil
	case raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, true, err
	case raw[0] == '{' || raw[0] == '[':
		return "", false, errors.New("a CloudEvent attribute is a string, a number or a boolean")
	}
	return string(raw), true, nil // a number or a boolean, as the decoder checked it
}

// settle moves e's time attribute, an RFC 3339 time, to its Time, and
// makes its subject the Resource (the events of one subject reach a
// function in publish order).
func settle(e *triggers.Event) error {
	e.Resource = e.Attributes["subject"]
	t, ok := e.Attributes["time"]
	if !ok {
		return nil
	}
	at, err := time.Parse(time.RFC3339Nano, t)
	if err != nil {
		return fmt.Errorf("attribute time: %q is not an RFC 3339 time", t)
	}
	e.Time = at
	delete(e.Attributes, "time")
	return nil
}

// attributeNameChars are what an attribute's name is made of: CloudEvents
// names are lower-case letters and digits; loupe also takes the upper-case
// letters, '-', '_' and '.' the publishers in use send (an HTTP header name
// can hold them all, as binary-mode delivery needs).
const attributeNameChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."

// checkEvent says which of e's attributes cannot be handed to a function: a
// name of other characters than attributeNameChars, a value with control
// characters or that is not UTF-8 (CloudEvents strings allow neither, nor
// do the headers a binary-mode CloudEvent carries them in).
func checkEvent(e triggers.Event) error {
	attrs := map[string]string{"id": e.ID, "type": e.Types[0]}
	for k, v := range e.Attributes {
		attrs[k] = v
	}
	for name, value := range attrs {
		if name == "" || strings.Trim(name, attributeNameChars) != "" {
			return fmt.Errorf("attribute name %q: CloudEvent attribute names are letters and digits", name)
		}
		if !utf8.ValidString(value) || strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }) {
			return fmt.Errorf("attribute %s: a CloudEvent string holds no control characters", name)
		}
	}
	return nil
}

// attributeValue is a CloudEvent attribute's value as a string, whichever
// of the protobuf form's kinds it is.
func attributeValue(v map[string]any) (string, error) {
	for _, kind := range []string{"ceString", "ceTimestamp", "ceUri", "ceUriRef", "ceBytes"} {
		if s, ok := v[kind].(string); ok {
			return s, nil
		}
	}
	if b, ok := v["ceBoolean"].(bool); ok {
		return strconv.FormatBool(b), nil
	}
	if n, ok := v["ceInteger"].(float64); ok {
		return strconv.FormatInt(int64(n), 10), nil
	}
	return "", fmt.Errorf("no value of a kind CloudEvents know (ceString, ceTimestamp, ceBoolean, ceInteger, ceUri, ceUriRef, ceBytes)")
}
