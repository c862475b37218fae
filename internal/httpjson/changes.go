package httpjson

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/loupe-dev/loupe/internal/changes"
	"github.com/loupe-dev/loupe/internal/errs"
)

// LongPoll is how long ServeChanges waits for a change before it answers the
// same version.
var LongPoll = 25 * time.Second

// ServeChanges answers {"version": N}: at once without ?since=, else once the
// counter differs from since, or after LongPoll unchanged.
func ServeChanges(w http.ResponseWriter, r *http.Request, c *changes.Counter) {
	v := c.Version()
	if since := r.URL.Query().Get("since"); since != "" {
		n, err := strconv.ParseUint(since, 10, 64)
		if err != nil {
			Error(w, errs.New(errs.InvalidArgument, "since must be a version number"))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), LongPoll)
		defer cancel()
		v = c.Wait(ctx, n)
	}
	Write(w, http.StatusOK, map[string]any{"version": v})
}
