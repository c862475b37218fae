package functions

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

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
// the project whose custom-event trigger (onCustomEventPublished) names its
// type and the channel and whose filters its attributes match; the function
// gets it as a CloudEvent whose data is the parsed JSON (application/json)
// or the text.

// maxPublishBody bounds a publishEvents request (production's request limit
// is 512 KB of events; loupe allows more, not unbounded).
const maxPublishBody = 4 << 20

// ChannelInstance is how triggers name an Eventarc channel (the Instance
// of its events and triggers): its location and id, the project being the
// event's own.
func ChannelInstance(location, channel string) string {
	return "locations/" + location + "/channels/" + channel
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
	if err := s.env.Credentials.RequireAdmin(r.Header.Get("Authorization"), project); err != nil {
		httpjson.Error(w, err)
		return
	}
	var body struct {
		Events []protoCloudEvent `json:"events"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxPublishBody)).Decode(&body); err != nil {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "Invalid JSON payload received: "+err.Error()))
		return
	}
	instance := ChannelInstance(location, channel)
	events := make([]triggers.Event, 0, len(body.Events))
	for i, ce := range body.Events {
		e, err := customEvent(ce, project, instance)
		if err != nil {
			httpjson.Error(w, errs.New(errs.InvalidArgument, fmt.Sprintf("events[%d]: %v", i, err)))
			return
		}
		events = append(events, e)
	}
	s.Publish(events...)
	httpjson.Write(w, http.StatusOK, map[string]any{})
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
	if t, ok := e.Attributes["time"]; ok {
		at, err := time.Parse(time.RFC3339Nano, t)
		if err != nil {
			return triggers.Event{}, fmt.Errorf("attribute time: %q is not an RFC 3339 time", t)
		}
		e.Time = at
		delete(e.Attributes, "time")
	}
	e.Resource = e.Attributes["subject"]
	contentType := e.Attributes["datacontenttype"]
	switch {
	case ce.TextData != nil && strings.HasPrefix(contentType, "application/json"):
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
	return e, nil
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
