package node

import (
	"math/rand/v2"
	"time"
)

// firstRetry is the first wait of a backoff.
const firstRetry = 250 * time.Millisecond

// backoff spaces the retries of one wait: from firstRetry, doubling, up to
// a cap, each drawn at random from the upper half of its step so that
// processes that failed together do not retry together.
type backoff struct {
	step, cap time.Duration
}

// newBackoff returns a backoff capped at limit (at least firstRetry).
func newBackoff(limit time.Duration) *backoff {
	limit = max(limit, firstRetry)
	return &backoff{step: firstRetry, cap: limit}
}

// next returns how long to wait before the next attempt.
func (b *backoff) next() time.Duration {
	d := b.step
	b.step = min(2*b.step, b.cap)
	return d/2 + rand.N(d/2+1)
}
