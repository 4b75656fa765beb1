package client_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"google.golang.org/grpc"

	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/firnpb"
)

// wideServer answers every gRPC WideBatch with ids.
type wideServer struct {
	firnpb.UnimplementedFirnServer
	ids []string
}

func (s *wideServer) WideBatch(context.Context, *firnpb.WideBatchRequest) (*firnpb.WideBatchResponse, error) {
	return &firnpb.WideBatchResponse{Ids: s.ids}, nil
}

// TestWideBatchWithAnIDTwiceIsRefused: a UUID or ULID batch that holds
// one ID twice, in any text the parser reads as that ID (upper or lower
// case, braces, urn:uuid:, no dashes), is a bad_answer over gRPC and
// HTTP, none of its IDs returned, counted against its server as the
// other bad batches are: read as text, each looked new, and one caller
// got one ID twice. Distinct IDs are served.
func TestWideBatchWithAnIDTwiceIsRefused(t *testing.T) {
	u, v := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	l, m := ulid.Make(), ulid.Make()
	us, ls := u.String(), l.String()
	for _, tc := range []struct {
		name string
		form string
		ids  []string
		http bool // small enough for the HTTP answer's bound of 37 bytes an ID
		ok   bool
	}{
		{name: "distinct UUIDs", form: "uuid", ids: []string{us, v.String()}, http: true, ok: true},
		{name: "a UUID twice", form: "uuid", ids: []string{us, us}, http: true},
		{name: "a UUID and its upper case", form: "uuid", ids: []string{us, strings.ToUpper(us)}, http: true},
		{name: "a UUID and it in braces", form: "uuid", ids: []string{us, "{" + us + "}"}},
		{name: "a UUID and its URN", form: "uuid", ids: []string{"urn:uuid:" + us, us}},
		{name: "a UUID and it without dashes", form: "uuid", ids: []string{strings.ReplaceAll(us, "-", ""), us}, http: true},
		{name: "distinct ULIDs", form: "ulid", ids: []string{ls, m.String()}, http: true, ok: true},
		{name: "a ULID twice", form: "ulid", ids: []string{ls, ls}, http: true},
		{name: "a ULID and its lower case", form: "ulid", ids: []string{ls, strings.ToLower(ls)}, http: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gs := grpc.NewServer()
			firnpb.RegisterFirnServer(gs, &wideServer{ids: tc.ids})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go func() { _ = gs.Serve(ln) }()
			defer gs.Stop()
			cfgs := []client.Config{{Endpoints: []string{ln.Addr().String()}}}
			if tc.http {
				hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = w.Write([]byte(strings.Join(tc.ids, "\n") + "\n"))
				}))
				defer hs.Close()
				cfgs = append(cfgs, client.Config{Endpoints: []string{hs.URL}, HTTP: true})
			}
			for _, cfg := range cfgs {
				cfg.Attempts = 1
				c, err := client.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				var n int
				if tc.form == "uuid" {
					n, err = c.NextUUIDs(context.Background(), make([]uuid.UUID, len(tc.ids)))
				} else {
					n, err = c.NextULIDs(context.Background(), make([]ulid.ULID, len(tc.ids)))
				}
				failures := c.Stats().Endpoints[0].Failures
				_ = c.Close(context.Background())
				var e *client.Error
				switch {
				case tc.ok && (err != nil || n != len(tc.ids)):
					t.Errorf("%s: %d, %v; want the batch", cfg.Endpoints[0], n, err)
				case !tc.ok && (n != 0 || !errors.Is(err, client.ErrUnavailable) || !errors.As(err, &e) || e.Code != "bad_answer"):
					t.Errorf("%s: %d, %v; want nothing and a bad_answer error", cfg.Endpoints[0], n, err)
				case !tc.ok && !strings.Contains(err.Error(), cfg.Endpoints[0]):
					t.Errorf("%v does not name the server %s", err, cfg.Endpoints[0])
				case !tc.ok && failures != 1:
					t.Errorf("%s: %d failures counted, want 1: a bad answer counts against its server", cfg.Endpoints[0], failures)
				}
			}
		})
	}
}
