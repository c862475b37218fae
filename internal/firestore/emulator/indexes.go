package emulator

import (
	"encoding/json"
	"net/http"
)

// indexes answers GET /emulator/v1/projects/{p}/databases/{d}/indexes: the
// declared indexes, those built in memory, and the undeclared composite
// indexes queries needed, each with the definition to add to
// firestore.indexes.json.
func (s *Service) indexes(w http.ResponseWriter, r *http.Request) {
	db := "projects/" + r.PathValue("project") + "/databases/" + r.PathValue("database")
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s.Engine.Indexes(db))
}
