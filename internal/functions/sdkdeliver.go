package functions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/loupe-dev/loupe/internal/triggers"
)

// sdkDeliverer hands events to a function written with a Firebase functions
// SDK, through loupe's worker: a v1 (gcfv1) function gets the legacy
// (data, context) pair, a v2 one a CloudEvent; scheduled and task-queue
// functions are called over HTTP as Cloud Scheduler and Cloud Tasks call
// them. With structured set (Python), a v2 event is a structured-mode
// CloudEvent posted to the function's own path, as functions-framework
// takes it; otherwise it goes to the Node.js worker's /__/event/ route.
type sdkDeliverer struct {
	base       *url.URL
	fn         Function
	path       string // the worker's HTTP path for the function
	structured bool
}

// legacyEventTypes are the v1 SDK's names of the table's event types.
var legacyEventTypes = map[string]string{
	triggers.Created:               "providers/cloud.firestore/eventTypes/document.create",
	triggers.Updated:               "providers/cloud.firestore/eventTypes/document.update",
	triggers.Deleted:               "providers/cloud.firestore/eventTypes/document.delete",
	triggers.Written:               "providers/cloud.firestore/eventTypes/document.write",
	triggers.DatabaseCreated:       "providers/google.firebase.database/eventTypes/ref.create",
	triggers.DatabaseUpdated:       "providers/google.firebase.database/eventTypes/ref.update",
	triggers.DatabaseDeleted:       "providers/google.firebase.database/eventTypes/ref.delete",
	triggers.DatabaseWritten:       "providers/google.firebase.database/eventTypes/ref.write",
	triggers.UserCreated:           "providers/firebase.auth/eventTypes/user.create",
	triggers.UserDeleted:           "providers/firebase.auth/eventTypes/user.delete",
	triggers.ObjectFinalized:       "google.storage.object.finalize",
	triggers.ObjectDeleted:         "google.storage.object.delete",
	triggers.ObjectArchived:        "google.storage.object.archive",
	triggers.ObjectMetadataUpdated: "google.storage.object.metadataUpdate",
	triggers.MessagePublished:      "google.pubsub.topic.publish",
	triggers.ScheduleRun:           "google.pubsub.topic.publish",
}

// Deliver implements triggers.Deliverer.
func (d sdkDeliverer) Deliver(ctx context.Context, t triggers.Trigger, e triggers.Event) (int, error) {
	if e.Source == triggers.Tasks {
		return d.task(ctx, e)
	}
	if e.Source == triggers.Schedule && d.fn.Platform != "gcfv1" {
		return d.post(ctx, d.path, nil, map[string]string{
			"X-CloudScheduler-JobName":      scheduleJob(d.fn),
			"X-CloudScheduler-ScheduleTime": e.Time.UTC().Format(time.RFC3339),
		})
	}
	var body any
	if d.fn.Platform == "gcfv1" {
		data, context := legacyEvent(d.fn, t, e)
		body = map[string]any{"data": data, "context": context}
	} else {
		event := map[string]any{"datacontenttype": "application/json", "data": json.RawMessage(e.Data)}
		for k, v := range triggers.CloudEvent(e, t.EventType) {
			event[k] = v
		}
		body = map[string]any{"event": event}
		if d.structured {
			payload, err := json.Marshal(event)
			if err != nil {
				return 0, err
			}
			return d.post(ctx, d.path, payload, map[string]string{"Content-Type": "application/cloudevents+json"})
		}
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	return d.post(ctx, "/__/event/"+url.PathEscape(d.fn.Name), payload, map[string]string{"Content-Type": "application/json"})
}

// scheduleJob is the Cloud Scheduler job of a scheduled function, as
// firebase-tools names it on deploy.
func scheduleJob(f Function) string {
	return "firebase-schedule-" + f.Name + "-" + f.region()
}

// legacyEvent is the (data, context) pair a v1 function gets for e.
func legacyEvent(f Function, t triggers.Trigger, e triggers.Event) (data any, context map[string]any) {
	context = map[string]any{
		"eventId":   e.ID,
		"timestamp": e.Time.UTC().Format(time.RFC3339Nano),
		"eventType": legacyEventTypes[t.EventType],
	}
	var payload map[string]any
	_ = json.Unmarshal(e.Data, &payload)
	data = payload
	switch e.Source {
	case triggers.Firestore:
		context["resource"] = "projects/" + e.Project + "/databases/" + e.Instance + "/documents/" + e.Resource
		for _, k := range []string{"value", "oldValue"} {
			if doc, ok := payload[k].(map[string]any); ok {
				doc["readTime"] = e.Time.UTC().Format(time.RFC3339Nano)
			}
		}
	case triggers.Database:
		context["resource"] = "projects/_/instances/" + e.Instance + "/refs/" + e.Resource
		switch {
		case e.Auth == nil || e.Auth.Type == "admin":
			context["auth"] = map[string]any{"admin": true}
		case e.Auth.Type == "unauthenticated":
			context["auth"] = map[string]any{"admin": false}
		default:
			context["auth"] = map[string]any{"admin": false, "variable": map[string]any{"uid": e.Auth.ID, "token": e.Auth.Token}}
		}
	case triggers.Auth:
		context["resource"] = "projects/" + e.Project
	case triggers.Storage:
		context["resource"] = map[string]any{"service": "storage.googleapis.com",
			"name": "projects/_/buckets/" + e.Instance + "/objects/" + e.Resource, "type": "storage#object"}
	case triggers.PubSub:
		context["resource"] = map[string]any{"service": "pubsub.googleapis.com",
			"name": "projects/" + e.Project + "/topics/" + e.Instance, "type": "type.googleapis.com/google.pubsub.v1.PubsubMessage"}
		data = payload["message"]
	case triggers.Schedule:
		context["resource"] = map[string]any{"service": "pubsub.googleapis.com",
			"name": "projects/" + e.Project + "/topics/" + scheduleJob(f)}
		data = map[string]any{}
	}
	return data, context
}

// task calls a task-queue function as Cloud Tasks does: the task's body,
// with the queue, the task and its attempt in X-CloudTasks-* headers.
func (d sdkDeliverer) task(ctx context.Context, e triggers.Event) (int, error) {
	n := max(triggers.AttemptOf(ctx), 1)
	return d.post(ctx, d.path, e.Data, map[string]string{
		"Content-Type":                    "application/json",
		"X-CloudTasks-QueueName":          e.Instance,
		"X-CloudTasks-TaskName":           e.Resource,
		"X-CloudTasks-TaskRetryCount":     strconv.Itoa(n - 1),
		"X-CloudTasks-TaskExecutionCount": strconv.Itoa(n - 1),
		"X-CloudTasks-TaskETA":            fmt.Sprintf("%d", e.Time.Unix()),
	})
}

// post sends body to the worker's path, answering the status.
func (d sdkDeliverer) post(ctx context.Context, path string, body []byte, header map[string]string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.base.String()+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	for k, v := range header {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := deliveryClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
