// Command functions is a module of Go functions that take Eventarc events,
// for loupe's tests, written as for Cloud Run (functions-framework-go):
// shipped gets the custom events triggers.json routes to it, fatal the
// Crashlytics alerts. Each appends the CloudEvent it got, as one JSON line,
// to the file SHIPMENTS_SEEN names.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"log"
	"os"
	"time"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"
	"github.com/GoogleCloudPlatform/functions-framework-go/functions"
	cloudevent "github.com/cloudevents/sdk-go/v2/event"
)

func record(_ context.Context, e cloudevent.Event) error {
	line, err := json.Marshal(map[string]any{
		"id": e.ID(), "type": e.Type(), "source": e.Source(), "subject": e.Subject(),
		"time": e.Time().UTC().Format(time.RFC3339Nano), "datacontenttype": e.DataContentType(),
		"data": string(e.Data()), "extensions": e.Extensions(),
	})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(os.Getenv("SHIPMENTS_SEEN"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	return cmp.Or(err, f.Close())
}

func main() {
	for _, name := range []string{"shipped", "fatal"} {
		functions.CloudEvent(name, record)
	}
	if err := funcframework.StartHostPort(os.Getenv("HOST"), cmp.Or(os.Getenv("PORT"), "8080")); err != nil {
		log.Fatal(err)
	}
}
