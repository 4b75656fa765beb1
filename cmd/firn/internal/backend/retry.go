package backend

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// RetryEvery is how often OpenRetrying tries again a store that did not
// answer.
const RetryEvery = time.Second

// OpenRetrying opens the stores, and while they do not answer (an
// *UnreachableError: an outage, which a server waits out) logs why,
// hands it to unready (nil: none) and tries again, until ctx ends. Bad
// input is returned at once.
func (o Options) OpenRetrying(ctx context.Context, log *slog.Logger, unready func(error)) (*Stores, error) {
	for {
		stores, err := o.Open(ctx)
		var ue *UnreachableError
		if !errors.As(err, &ue) || ctx.Err() != nil {
			return stores, err
		}
		log.Error("store unreachable: not ready, retrying", "err", err, "retry_in", RetryEvery.String())
		if unready != nil {
			unready(err)
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(RetryEvery):
		}
	}
}
