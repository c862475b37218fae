package triggers

import (
	"strings"
	"time"
)

// Location is the region loupe's events come from.
const Location = "us-central1"

// CloudEvent returns the CloudEvent attributes (specversion, id, type,
// source, subject, time and the source's extensions) of e delivered as
// eventType, as Eventarc and the Firebase event sources set them.
func CloudEvent(e Event, eventType string) map[string]string {
	a := map[string]string{
		"specversion": "1.0",
		"id":          e.ID,
		"type":        eventType,
		"time":        e.Time.UTC().Format(time.RFC3339Nano),
	}
	switch e.Source {
	case Firestore:
		a["source"] = "//firestore.googleapis.com/projects/" + e.Project + "/databases/" + e.Instance
		a["subject"] = "documents/" + e.Resource
		a["project"], a["database"], a["namespace"], a["document"], a["location"] = e.Project, e.Instance, "(default)", e.Resource, Location
		if strings.HasSuffix(eventType, AuthContext) {
			a["authtype"], a["authid"] = "unknown", ""
			if e.Auth != nil {
				a["authtype"], a["authid"] = e.Auth.Type, e.Auth.ID
			}
		}
	case Database:
		a["source"] = "//firebasedatabase.googleapis.com/projects/_/locations/" + Location + "/instances/" + e.Instance
		a["subject"] = "refs/" + e.Resource
		a["instance"], a["ref"], a["location"] = e.Instance, e.Resource, Location
		a["firebasedatabasehost"] = "firebaseio.com"
		a["authtype"], a["authid"] = "admin", ""
		if e.Auth != nil {
			a["authtype"], a["authid"] = e.Auth.Type, e.Auth.ID
		}
	case Auth:
		a["source"] = "//firebaseauth.googleapis.com/projects/" + e.Project
		a["subject"] = "users/" + e.Resource
	case Storage:
		a["source"] = "//storage.googleapis.com/projects/_/buckets/" + e.Instance
		a["subject"] = "objects/" + e.Resource
		a["bucket"] = e.Instance
	case PubSub:
		a["source"] = "//pubsub.googleapis.com/projects/" + e.Project + "/topics/" + e.Instance
	case Schedule:
		a["source"] = "//cloudscheduler.googleapis.com/projects/" + e.Project + "/locations/" + Location + "/jobs/" + e.Instance
	case Tasks:
		a["source"] = "//cloudtasks.googleapis.com/projects/" + e.Project + "/locations/" + Location + "/queues/" + e.Instance
	case Eventarc:
		for k, v := range e.Attributes {
			if _, own := a[k]; !own {
				a[k] = v
			}
		}
	}
	return a
}
