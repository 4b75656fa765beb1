package client_test

import (
	"context"
	"errors"
	"fmt"
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
				if refusals(msg) != 4 || strings.Contains(msg, "no answer within") {
					t.Errorf("%s: %q; want each of the 4 attempts named refused", call.name, msg)
				}
			}
		})
	}
}

// TestRepeatedFailureWrittenOnce: attempts that failed alike at one server
// are written once with their count, and a different failure between them
// keeps its place.
func TestRepeatedFailureWrittenOnce(t *testing.T) {
	refused := &client.Error{Kind: client.ErrUnavailable, Endpoint: "a:1", Code: "transport", Message: "connection refused"}
	other := &client.Error{Kind: client.ErrUnavailable, Endpoint: "b:1", Code: "not_serving", Message: "no node"}
	tests := []struct {
		name  string
		tried []*client.Error
		want  string
	}{
		{"one server three times", []*client.Error{refused, refused, refused},
			"client: no firn server could serve: 3 requests failed: a:1: transport: connection refused (3 times)"},
		{"two servers alternating", []*client.Error{refused, other, refused},
			"client: no firn server could serve: 3 requests failed: a:1: transport: connection refused; b:1: not_serving: no node; a:1: transport: connection refused"},
		{"a run, then another", []*client.Error{refused, refused, other},
			"client: no firn server could serve: 3 requests failed: a:1: transport: connection refused (2 times); b:1: not_serving: no node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := *tt.tried[len(tt.tried)-1]
			e.Tried = tt.tried
			if got := e.Error(); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// refusals counts the attempts msg names refused: each "connection
// refused", times the count a repeated failure carries.
func refusals(msg string) int {
	n := 0
	for _, part := range strings.Split(msg, ";") {
		if !strings.Contains(part, "connection refused") {
			continue
		}
		times := 1
		if i := strings.LastIndex(part, " ("); i >= 0 {
			fmt.Sscanf(part[i:], " (%d times)", &times)
		}
		n += times
	}
	return n
}
