package node_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// failingClaims answers its first claims with errs, in order, then as
// the store it wraps.
type failingClaims struct {
	nodeid.Store
	errs  []error
	calls int
}

func (f *failingClaims) Claim(ctx context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	f.calls++
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return nodeid.Claim{}, err
	}
	return f.Store.Claim(ctx, req)
}

// TestStoreErrorAfterAnAnswerIsWaitedOut: a holder waiting for a free
// node whose store then fails with an error of its own (etcd's leader
// election answers "context deadline exceeded" as code Unknown) keeps
// waiting, where it used to return the error and end firn serve. An error
// before the store ever answered, or one saying the namespace cannot
// serve this process, still ends the acquisition.
func TestStoreErrorAfterAnAnswerIsWaitedOut(t *testing.T) {
	election := errors.New("list nodes: rpc error: code = Unknown desc = context deadline exceeded")
	full := &nodeid.PoolFullError{Held: 4, Pool: 4}
	tests := []struct {
		name    string
		errs    []error
		wantErr error
	}{
		{"pool full, then the store fails, then a node", []error{full, election, election}, nil},
		{"the store fails before answering", []error{election}, election},
		{"pool full, then another layout", []error{full, nodeid.ErrLayoutMismatch}, nodeid.ErrLayoutMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &failingClaims{Store: nodeidtest.NewMemStore(), errs: tc.errs}
				h := newHolder(t, config(store))
				_, _, err := h.Acquire(context.Background())
				if tc.wantErr == nil && err != nil {
					t.Fatalf("Acquire after %d claims: %v; want a node once the store answers again", store.calls, err)
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Fatalf("Acquire: %v; want %v", err, tc.wantErr)
				}
			})
		})
	}
}
