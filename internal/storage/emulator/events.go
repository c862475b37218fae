package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/loupe-dev/loupe/internal/storage"
	"github.com/loupe-dev/loupe/internal/triggers"
)

// Publisher takes Storage's events: the functions' trigger table.
type Publisher interface {
	Publish(events ...triggers.Event)
}

// SetPublisher has each object finalized, deleted or whose metadata changed
// published as a Cloud Storage event carrying the object's JSON resource.
func (s *Service) SetPublisher(p Publisher) {
	types := map[string]string{"finalized": triggers.ObjectFinalized, "deleted": triggers.ObjectDeleted,
		"metadataUpdated": triggers.ObjectMetadataUpdated}
	s.engine.Store().OnChange(func(change string, o storage.Object) {
		// The resource's links name Google's host, as a production event's do.
		data, _ := json.Marshal(gcsJSON(&http.Request{Host: "www.googleapis.com"}, &o))
		now := time.Now()
		p.Publish(triggers.Event{ID: fmt.Sprintf("%d-%d", now.UnixNano(), o.Metageneration), Source: triggers.Storage,
			Types: []string{types[change]}, Project: s.env.ProjectID, Instance: o.Bucket, Resource: o.Name, Time: now, Data: data})
	})
}
