package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/firn-id/firn/segment"
)

// TestTagRefusesANameNoStoreCanHold: a tag that is not UTF-8, or longer
// than any store holds, is ErrInvalid at once, without a request (on the
// old code it went to a server, whose error the buffer then retried).
func TestTagRefusesANameNoStoreCanHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, fakes := fakeClient(t, 1, Config{})
		ctx := context.Background()
		for _, name := range []string{"\xff", "order\xc3", strings.Repeat("x", segment.LongestTag+1)} {
			if _, err := c.Tag(name).Next(ctx); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "UTF-8") && !strings.Contains(err.Error(), "limit") {
				t.Errorf("Tag(%q).Next = %v; want ErrInvalid naming the rule", name, err)
			}
			if _, err := c.Tag(name).NextN(ctx, make([]int64, 2)); !errors.Is(err, ErrInvalid) {
				t.Errorf("Tag(%q).NextN = %v; want ErrInvalid", name, err)
			}
		}
		synctest.Wait()
		fakes[0].mu.Lock()
		asked := fakes[0].batches
		fakes[0].mu.Unlock()
		if asked != 0 {
			t.Fatalf("%d requests reached the server; want none", asked)
		}
		// Rows the originals serve, trailing space and all, still go out.
		if _, err := c.Tag("order ").Next(ctx); err != nil {
			t.Errorf("Tag(%q).Next = %v; want an ID", "order ", err)
		}
	})
}
