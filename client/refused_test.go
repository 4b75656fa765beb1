package client_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/client"
)

// refusedAddr returns a loopback address nothing listens on: a port the
// system handed out free, its listener closed.
func refusedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestRefusedEndpointsAreNamedAsRefused: with every endpoint refusing
// connections, Next and a tag's Next fail after one round of attempts,
// each attempt reported as refused and naming its endpoint, never as a
// timeout. Config.Timeout is an hour and the context has no deadline: a
// try that waited for the timeout instead would hang the test until go
// test's own timeout, where today it waited 2 s a try over gRPC.
func TestRefusedEndpointsAreNamedAsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		http   bool
		prefix string
	}{
		{name: "grpc"},
		{name: "http", http: true, prefix: "http://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eps := []string{tc.prefix + refusedAddr(t), tc.prefix + refusedAddr(t)}
			c, err := client.New(client.Config{Endpoints: eps, HTTP: tc.http, Timeout: time.Hour, Attempts: 4})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(context.Background())
			for _, call := range []struct {
				name string
				next func(context.Context) (int64, error)
			}{
				{"Next", c.Next},
				{"Tag.Next", c.Tag("order").Next},
			} {
				_, err := call.next(context.Background())
				var e *client.Error
				if !errors.Is(err, client.ErrUnavailable) || !errors.As(err, &e) {
					t.Fatalf("%s: %v; want ErrUnavailable", call.name, err)
				}
				if len(e.Tried) != 4 {
					t.Errorf("%s: %d attempts, want Config.Attempts (4): %v", call.name, len(e.Tried), err)
				}
				named := map[string]bool{}
				for i, tr := range e.Tried {
					named[tr.Endpoint] = true
					if !strings.Contains(tr.Message, "connection refused") || strings.Contains(tr.Message, "no answer within") {
						t.Errorf("%s: attempt %d, to %s: %s: %s; want connection refused", call.name, i+1, tr.Endpoint, tr.Code, tr.Message)
					}
				}
				msg := err.Error()
				for _, ep := range eps {
					if !named[ep] || !strings.Contains(msg, ep) {
						t.Errorf("%s: %q does not name %s", call.name, msg, ep)
					}
				}
				if strings.Count(msg, "connection refused") != 4 || strings.Contains(msg, "no answer within") {
					t.Errorf("%s: %q; want each of the 4 attempts named refused", call.name, msg)
				}
			}
		})
	}
}
