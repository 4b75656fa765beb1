package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"
)

// TestTagAdvanceServerAnswersNull: a 200 whose JSON body is null or {}
// (a proxy's, or another service at the address), or whose next ID is
// below the one asked for, proves nothing moved: firn tag advance
// --server exits non-zero and prints nothing. It printed "next ID 0", a
// number the server never gave.
func TestTagAdvanceServerAnswersNull(t *testing.T) {
	for _, body := range []string{"null", "{}", `{"tag":"order","next":"5"}`} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}))
		defer hs.Close()
		out, errOut, code := runCLI("tag", "advance", "order", "--to", "100", "--server", hs.URL)
		if code == 0 || out != "" {
			t.Errorf("advance on a 200 %s: exit %d, stdout %q, stderr %q; want an error and nothing printed", body, code, out, errOut)
		}
	}
}

// TestCATokenWithoutServerRefused: with no server to ask, --ca and --token
// would be ignored while the command ran on the store; they are refused,
// and FIRN_TOKEN, which a shell may hold for other commands, is not.
func TestCATokenWithoutServerRefused(t *testing.T) {
	for _, tt := range []struct{ name, flag, value string }{
		{name: "ca", flag: "--ca", value: "/nonexist"},
		{name: "token", flag: "--token", value: "X"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, cmd := range [][]string{{"next"}, {"tag", "list"}} {
				args := append(cmd, "--data-dir", t.TempDir(), tt.flag, tt.value)
				if got := runBadInput(t, args...); !strings.Contains(got, tt.flag+" applies only with --server") {
					t.Fatalf("%v: %q; want %s refused", args, got, tt.flag)
				}
			}
		})
	}
	t.Setenv("FIRN_TOKEN", "X")
	if out, errOut, code := runCLI("next", "--data-dir", t.TempDir()); code != 0 {
		t.Fatalf("FIRN_TOKEN set, no --server: exit %d, %q %q; want IDs", code, out, errOut)
	}
}

// TestServerURLRefusedRedacted: a --server URL with a password, a token
// in its query or a fragment is refused by the client's rule, and named
// with those hidden, as --dsn is.
func TestServerURLRefusedRedacted(t *testing.T) {
	for _, tt := range []struct{ name, server, want string }{
		{name: "password", server: "http://user:hunter2@127.0.0.1:8080", want: `--server "http://user:REDACTED@127.0.0.1:8080": credentials in the URL: pass the token in --token`},
		{name: "query token", server: "http://127.0.0.1:8080?token=hunter2", want: `--server "http://127.0.0.1:8080?token=REDACTED": a query`},
		{name: "bare query", server: "http://127.0.0.1:8080?hunter2", want: `--server "http://127.0.0.1:8080?REDACTED": a query`},
		{name: "fragment", server: "http://127.0.0.1:8080#hunter2", want: `--server "http://127.0.0.1:8080#REDACTED": a fragment`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := runBadInput(t, "next", "--server", tt.server)
			if !strings.Contains(got, tt.want) || strings.Contains(got, "hunter2") {
				t.Fatalf("--server %s: %q; want %q, without the secret", tt.server, got, tt.want)
			}
		})
	}
}

// TestServerTransportErrorsSayWhatToDo: each way --server can name the
// wrong thing gives one line saying what to do, with the two scheme
// mistakes and the other port as bad input (exit 2), no URL twice and no
// binary bytes.
func TestServerTransportErrorsSayWhatToDo(t *testing.T) {
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	tlsServer := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsServer.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()
	stopped := "http://" + closedPort(t)
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{name: "https to plain HTTP", args: []string{"--server", strings.Replace(plain.URL, "http:", "https:", 1)}, code: 2, want: "speaks plain HTTP: use http:// in --server"},
		{name: "http to HTTPS", args: []string{"--server", strings.Replace(tlsServer.URL, "https:", "http:", 1)}, code: 2, want: "speaks HTTPS: use https:// in --server"},
		{name: "stopped", args: []string{"--server", stopped}, code: 1, want: "is firn serve running at " + stopped + "? (connection refused)"},
		{name: "gRPC port", args: []string{"--server", "http://" + ln.Addr().String()}, code: 2, want: "that is not firn's HTTP port (a gRPC port?)"},
		{name: "token with a newline", args: []string{"--server", plain.URL, "--token", "a\nb"}, code: 2, want: "--token holds a character a header cannot carry"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(append([]string{"next"}, tt.args...)...)
			if tt.name == "gRPC port" && code == 1 {
				// gRPC may close the connection before it writes a byte
				// firn could read as not HTTP: then there is no answer.
				tt.want = "closed the connection without an answer: is it running, and is that firn's HTTP port (not its gRPC port)?"
				tt.code = 1
			}
			if code != tt.code || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, one line with %q", code, out, errOut, tt.code, tt.want)
			}
			if strings.Contains(errOut, `\x`) || strings.Count(errOut, "127.0.0.1") > 1 || strings.ContainsFunc(errOut, func(r rune) bool { return r != '\n' && (r < ' ' || r == 0x7f) }) {
				t.Fatalf("stderr %q: binary bytes, or the URL twice", errOut)
			}
		})
	}
}
