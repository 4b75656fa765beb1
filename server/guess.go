package server

import (
	"net/http"
	"time"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/snowflake"
)

// guess ranks the presets an ID of unknown origin plausibly belongs to
// (snowflake.Guess), whatever layout the server issues.
func (h *handler) guess(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	out := api.NewGuess(id, snowflake.Guess(id, time.Now()))
	writeJSON(w, http.StatusOK, out)
}
