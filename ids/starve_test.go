package ids_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/ids"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/sqlstore"
)

// TestStarvedOfConnectionsSaysWhy: when the application takes every
// connection firn's renewals could use — all its database role allows
// (Open), or all of the pool it shares with firn (FromDB) — renewals
// fail; once the HWM is reached, the error says why, not a bare
// deadline, and issuing resumes when the application gives the
// connections back.
func TestStarvedOfConnectionsSaysWhy(t *testing.T) {
	testenv.NotShort(t, "a real database")
	const limit = 2
	for _, tc := range []struct {
		how, want string
		shared    bool
	}{
		{"Open, role limit", "too many connections", false},
		{"FromDB, the application's pool", "connections of the pool in use", true},
	} {
		t.Run(tc.how, func(t *testing.T) {
			hosts, target := limitedPostgres(t, limit+1)
			dsn := target(hosts)
			app, err := sql.Open("pgx", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer app.Close()
			log, _ := quiet()
			var src *ids.Source
			if tc.shared {
				app.SetMaxOpenConns(limit)
				src, err = ids.FromDB(app, sqlstore.Postgres, ids.Options{Namespace: "starve", Log: log})
			} else {
				src, err = ids.Open(context.Background(), "postgres", dsn, ids.Options{Namespace: "starve", Log: log})
			}
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close(context.Background())
			if _, err := src.Next(context.Background()); err != nil {
				t.Fatal(err)
			}
			var held []*sql.Conn
			want := limit + 1 // the role's limit
			if tc.shared {
				want = limit // the pool's
			}
			deadline := time.Now().Add(5 * time.Second)
			for len(held) < want && time.Now().Before(deadline) {
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				c, err := app.Conn(ctx)
				cancel()
				if err != nil {
					time.Sleep(10 * time.Millisecond) // a renewal holds one for a moment
					continue
				}
				held = append(held, c)
			}
			if len(held) < want {
				t.Fatalf("the application took %d of %d connections", len(held), want)
			}
			time.Sleep(4500 * time.Millisecond) // past the 3 s window, within the 10 s TTL
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			_, nerr := src.Next(ctx)
			cancel()
			if nerr == nil {
				t.Fatal("Next served 4.5 s after every renewal was refused: past the HWM")
			}
			if !strings.Contains(nerr.Error(), tc.want) {
				t.Errorf("Next: %v\nwant it to say %q", nerr, tc.want)
			}
			app.SetMaxIdleConns(0) // a connection given back closes
			for _, c := range held {
				c.Close()
			}
			ctx, cancel = context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			if _, err := src.Next(ctx); err != nil {
				t.Fatalf("Next after the application gave its connections back: %v", err)
			}
		})
	}
}
