package httpguard

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// ReadBody reads the request body whole, at most MaxBodyBytes within
// BodyTimeout, then lifts the read deadline so a long-running answer (a
// stream) is not cut off. A refusal is written and ok is false: a body
// over the limit is 400 "Request too large" (0.3.x's answer; a declared
// Content-Length over the limit is refused before anything is read), a
// body still incomplete when the deadline passes is 408.
func (g *Guard) ReadBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	rc := http.NewResponseController(w)
	if r.ContentLength > g.maxBody {
		w.Header().Set("Connection", "close")
		WriteError(w, http.StatusBadRequest, CodeTooLarge)
		return nil, false
	}
	_ = rc.SetReadDeadline(time.Now().Add(g.bodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.maxBody))
	var tooLarge *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooLarge):
		WriteError(w, http.StatusBadRequest, CodeTooLarge)
		return nil, false
	case errors.As(err, &netErr) && netErr.Timeout():
		w.Header().Set("Connection", "close")
		WriteError(w, http.StatusRequestTimeout, CodeTimeout)
		return nil, false
	case err != nil:
		w.Header().Set("Connection", "close")
		WriteError(w, http.StatusBadRequest, "could not read the request body: "+err.Error())
		return nil, false
	}
	_ = rc.SetReadDeadline(time.Time{})
	return body, true
}

// MaxBodyBytes is the body limit the guard applies.
func (g *Guard) MaxBodyBytes() int64 { return g.maxBody }
