package emulator

import (
	"net/http"

	"github.com/loupe-dev/loupe/internal/httpjson"
)

// indexes answers GET /emulator/v1/projects/{p}/databases/{d}/indexes: the
// declared indexes, those built in memory, and the undeclared composite
// indexes queries needed, each with the definition to add to
// firestore.indexes.json.
func (s *Service) indexes(w http.ResponseWriter, r *http.Request) {
	db := "projects/" + r.PathValue("project") + "/databases/" + r.PathValue("database")
	httpjson.Write(w, http.StatusOK, s.Engine.Indexes(db))
}
