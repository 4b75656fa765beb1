package server

import (
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/firn-id/firn/internal/secret"
)

// RecentErrors is how many errors /v1/status keeps: the latest.
const RecentErrors = 20

// RecentCallerErrors is how many of those may be callers' errors
// (source "caller"): a client asking for one unknown tag after another
// replaces its own entries, never the node's errors.
const RecentCallerErrors = 5

// sourceCaller is the source of a caller's error worth an operator's
// eye: a request for a tag the store does not have.
const sourceCaller = "caller"

// recentErrors is a bounded ring of the latest errors the node met, for
// /v1/status. A message repeating the latest one of its source — the
// same words, its times and durations aside — only updates its text,
// time and count. Messages are redacted (redactSecrets): a DSN's
// password or a bearer token never reaches the page.
type recentErrors struct {
	mu   sync.Mutex
	ring []recentError // oldest first, at most RecentErrors
}

// recentError is one error: when it was last seen, where it came from
// (lease, readiness, segment, request, caller) and what it said.
type recentError struct {
	Time    time.Time `json:"time"`
	Source  string    `json:"source"`
	Message string    `json:"message"`
	Count   int       `json:"count"`
	shape   string    // shapeOf(Message)
}

// note records an error from source, counting one more if it repeats
// the source's latest.
func (r *recentErrors) note(source string, err error, now time.Time) { r.add(source, err, now, 1) }

// seen records a state found failing when it is read (a lease lost, a
// tag whose last fetch failed): a repeat of the source's latest message
// only moves its time, so reading it often counts nothing.
func (r *recentErrors) seen(source string, err error, now time.Time) { r.add(source, err, now, 0) }

func (r *recentErrors) add(source string, err error, now time.Time, count int) {
	if err == nil {
		return
	}
	msg := redactSecrets(err.Error())
	shape := shapeOf(msg)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.ring) - 1; i >= 0; i-- {
		if e := &r.ring[i]; e.Source == source {
			if e.shape == shape {
				e.Time, e.Count, e.Message = now, e.Count+count, msg
				r.ring = append(append(r.ring[:i:i], r.ring[i+1:]...), *e)
				return
			}
			break
		}
	}
	callers := 0
	for _, e := range r.ring {
		if e.Source == sourceCaller {
			callers++
		}
	}
	switch {
	case source == sourceCaller && callers == RecentCallerErrors:
		r.drop(sourceCaller)
	case len(r.ring) == RecentErrors:
		r.drop("")
	}
	r.ring = append(r.ring, recentError{Time: now, Source: source, Message: msg, Count: 1, shape: shape})
}

// drop removes the oldest error of source, or the oldest of all when
// source is empty.
func (r *recentErrors) drop(source string) {
	for i, e := range r.ring {
		if source == "" || e.Source == source {
			r.ring = append(r.ring[:i:i], r.ring[i+1:]...)
			return
		}
	}
}

// moments match the times and durations an error may carry: an RFC 3339
// time, a Unix millisecond, a Go duration.
var moments = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)|\b\d{13}\b|\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)\b`)

// shapeOf is msg without the times and durations in it: two messages of
// one shape are one error seen again ("tick ends 2026-11-26T07:27:42.482Z"
// repeats "tick ends 2026-11-26T07:27:41.019Z", while "node 3" is not
// "node 12").
func shapeOf(msg string) string { return moments.ReplaceAllString(msg, "⋯") }

// list returns the errors, newest first.
func (r *recentErrors) list() []recentError {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]recentError, len(r.ring))
	for i, e := range r.ring {
		out[len(out)-1-i] = e
	}
	return out
}

// secretPatterns match what an error from a store could carry that must
// not be shown: a URL's user:password@, a key=value or key: value whose
// key holds one of secret.Words (?password=, sslpassword=,
// passwd=), a bearer token, MySQL's user:password@tcp(.
var secretPatterns = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]*@`), "${1}REDACTED@"},
	{regexp.MustCompile(`(?i)((?:` + strings.Join(secret.Words, "|") + `)\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;)&]+)`), "${1}REDACTED"},
	{regexp.MustCompile(`(?i)(bearer\s+)\S+`), "${1}REDACTED"},
	{regexp.MustCompile(`([^\s:/@(]+):[^\s:/@]*@(tcp|unix)\(`), "${1}:REDACTED@${2}("},
}

// redactSecrets returns msg with passwords and tokens replaced by
// REDACTED: the patterns above, and every password the process read in
// a setting (secret.Scrub), which a driver's message may quote in any
// form.
func redactSecrets(msg string) string {
	msg = secret.Scrub(msg)
	for _, p := range secretPatterns {
		msg = p.re.ReplaceAllString(msg, p.with)
	}
	return msg
}
