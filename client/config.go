package client

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/snowflake"
)

// Config configures a Client. The zero value of every field but Endpoints
// means its default.
type Config struct {
	// Endpoints are the servers: host:port of their gRPC listeners, or with
	// HTTP set, base URLs (http://host:8080). At least one is required.
	Endpoints []string
	// HTTP makes the client talk the /v1 HTTP API instead of gRPC.
	HTTP bool
	// Token is the bearer token sent with every request; empty sends none.
	Token string
	// TLS, when set, makes gRPC use TLS with it, and configures https://
	// endpoints with HTTP.
	TLS *tls.Config
	// Layout is the servers' layout, for Decompose. Default: the firn
	// preset.
	Layout snowflake.Layout
	// Encoding is the text form of NextText and Tag.NextText: decimal (the
	// default), base62 or base32, fixed width so the strings sort as the
	// numbers do (package idtext).
	Encoding idtext.Encoding

	// Buffer is the least a buffer aims to hold, in IDs. Default 1,000.
	Buffer int
	// MaxBuffer is the most a buffer aims to hold. Default 1,000,000.
	MaxBuffer int
	// Ahead is how long a buffer should last at the observed rate: its
	// size is the rate times Ahead, between Buffer and MaxBuffer. Default
	// 250 ms, at most MaxAge/2.
	Ahead time.Duration
	// Refill is the fraction of the size below which a refill starts in
	// the background, in (0, 1). Default 0.5.
	Refill float64
	// MaxBatch is the most IDs one request asks for, at most the servers'
	// max_batch. Default 10,000.
	MaxBatch int
	// Parallel is the number of refill requests in flight per buffer.
	// Default 2.
	Parallel int
	// MaxAge is how long a fetched snowflake ID may wait in the buffer,
	// counted from when its request was sent; older ones are dropped. A
	// snowflake answer that arrives this old counts against its server
	// as a failure. Default 1 s.
	MaxAge time.Duration

	// Timeout bounds one request to one server. Default 2 s. A request
	// is hedged long before: past 4 times its server's latency, from
	// 5 ms up to min(Timeout/8, MaxAge/4).
	Timeout time.Duration
	// Attempts bounds the requests of one refill, hedges included, a
	// failed server counting once per try. Default the number of
	// endpoints plus one, at least 3.
	Attempts int
	// Backoff is the pause after every server failed once in a refill,
	// and after a refill failed, doubling up to MaxBackoff. Defaults 50 ms
	// and 1 s.
	Backoff, MaxBackoff time.Duration
	// HealthInterval is how often a server that failed is checked
	// (gRPC health, dialling anew, or /readyz) until it is ready again;
	// each check is bounded by it, so a server is back in rotation
	// within one interval of being ready. Default 500 ms.
	HealthInterval time.Duration
}

// withDefaults fills in defaults and checks every field.
func (cfg Config) withDefaults() (Config, error) {
	if len(cfg.Endpoints) == 0 {
		return cfg, errors.New("client: Config.Endpoints is empty: name at least one firn server")
	}
	if err := checkEndpoints(cfg.Endpoints, cfg.HTTP); err != nil {
		return cfg, err
	}
	if cfg.Layout.Name == "" && cfg.Layout.TimeBits == 0 {
		cfg.Layout, _ = snowflake.Preset("firn")
	}
	if err := cfg.Layout.Validate(); err != nil {
		return cfg, fmt.Errorf("client: Config.Layout: %w", err)
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&cfg.Buffer, 1_000)
	def(&cfg.MaxBuffer, 1_000_000)
	def(&cfg.MaxBatch, 10_000)
	def(&cfg.Parallel, 2)
	def(&cfg.Attempts, max(3, len(cfg.Endpoints)+1))
	defD(&cfg.MaxAge, time.Second)
	defD(&cfg.Ahead, min(250*time.Millisecond, cfg.MaxAge/2))
	defD(&cfg.Timeout, 2*time.Second)
	defD(&cfg.Backoff, 50*time.Millisecond)
	defD(&cfg.MaxBackoff, time.Second)
	defD(&cfg.HealthInterval, 500*time.Millisecond)
	if cfg.Refill == 0 {
		cfg.Refill = 0.5
	}
	for _, c := range []struct {
		name string
		bad  bool
		want string
	}{
		{"Buffer", cfg.Buffer < 1, "at least 1"},
		{"MaxBuffer", cfg.MaxBuffer < cfg.Buffer, fmt.Sprintf("at least Buffer (%d)", cfg.Buffer)},
		{"MaxBatch", cfg.MaxBatch < 1 || cfg.MaxBatch > 1<<31-1, "from 1 to 2^31-1"},
		{"Parallel", cfg.Parallel < 1, "at least 1"},
		{"Attempts", cfg.Attempts < 1, "at least 1"},
		{"Refill", !(cfg.Refill > 0 && cfg.Refill < 1), "between 0 and 1, exclusive"},
		{"MaxAge", cfg.MaxAge < 0, "positive"},
		{"Ahead", cfg.Ahead < 0 || cfg.Ahead > cfg.MaxAge/2, fmt.Sprintf("positive, at most MaxAge/2 (%s)", cfg.MaxAge/2)},
		{"Timeout", cfg.Timeout < 0, "positive"},
		{"Backoff", cfg.Backoff < 0, "positive"},
		{"MaxBackoff", cfg.MaxBackoff < cfg.Backoff, "at least Backoff"},
		{"HealthInterval", cfg.HealthInterval < 0, "positive"},
		{"Encoding", !cfg.Encoding.Valid(), idtext.EncodingNames},
	} {
		if c.bad {
			return cfg, fmt.Errorf("client: Config.%s: want %s", c.name, c.want)
		}
	}
	return cfg, nil
}

// checkEndpoints refuses an endpoint that can never work, and the same
// server named twice (a hedge would go to the server it hedges).
func checkEndpoints(eps []string, useHTTP bool) error {
	seen := map[string]bool{}
	for _, e := range eps {
		key, err := checkEndpoint(e, useHTTP)
		if err != nil {
			return err
		}
		if seen[key] {
			return &EndpointError{Endpoint: redact(e), Reason: "listed twice"}
		}
		seen[key] = true
	}
	return nil
}

// checkEndpoint checks one endpoint and returns it as a key that two
// spellings of one server share.
func checkEndpoint(e string, useHTTP bool) (string, error) {
	if useHTTP {
		return checkURL(e)
	}
	host, port, err := net.SplitHostPort(e)
	if err != nil || strings.ContainsAny(e, "/@?#") {
		return "", &EndpointError{Endpoint: redact(e), Reason: "want host:port of a gRPC listener, such as 127.0.0.1:9090 (or set HTTP for URLs)"}
	}
	if port == "" {
		return "", &EndpointError{Endpoint: e, Reason: "no port: want host:port, such as 127.0.0.1:9090"}
	}
	if err := checkHostPort(host, port); err != nil {
		return "", &EndpointError{Endpoint: e, Reason: err.Error()}
	}
	return net.JoinHostPort(strings.ToLower(host), port), nil
}

// checkURL checks a base URL of the HTTP API: http or https, a host, a
// port if any in range, nothing after the host but an optional "/". A URL
// with credentials is refused, and named without them: the token goes in
// Config.Token.
func checkURL(e string) (string, error) {
	const want = "want a base URL such as http://127.0.0.1:8080"
	u, err := url.Parse(e)
	if err != nil {
		return "", &EndpointError{Endpoint: redact(e), Reason: want}
	}
	var why string
	credentials := false
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		why = "scheme " + strconv.Quote(u.Scheme) + ": " + want
	case u.User != nil:
		why, credentials = "credentials in the URL: pass the token in Config.Token", true
	case u.Opaque != "" || u.Host == "":
		why = "no host: " + want
	case strings.Trim(u.Path, "/") != "":
		why = "a path (" + u.Path + "): " + want
	case u.RawQuery != "" || u.ForceQuery:
		why = "a query: " + want
	case u.Fragment != "" || strings.Contains(e, "#"):
		why = "a fragment: " + want
	}
	if why == "" {
		if err := checkHostPort(u.Hostname(), u.Port()); err != nil {
			why = err.Error()
		} else if strings.HasSuffix(u.Host, ":") {
			why = "an empty port: " + want
		}
	}
	if why != "" {
		return "", &EndpointError{Endpoint: redact(e), Reason: why, Credentials: credentials}
	}
	return u.Scheme + "://" + strings.ToLower(u.Host), nil
}

// checkHostPort checks the parts of host:port; an empty port is allowed
// only where the caller allows it (a URL with its scheme's port).
func checkHostPort(host, port string) error {
	if host == "" {
		return errors.New("no host")
	}
	if strings.ContainsAny(host, " \t\r\n") {
		return errors.New("white space in the host")
	}
	if port == "" {
		return nil
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q: want 1 to 65535", port)
	}
	return nil
}

// redact is e with what could be a secret replaced, for error messages:
// the password of its user information, the value of each query parameter
// (a token put there), and its fragment. What does not parse as a URL is
// cut at its user information and query instead.
func redact(e string) string {
	if !strings.ContainsAny(e, "@?#") {
		return e
	}
	u, err := url.Parse(e)
	if err != nil {
		if i := strings.LastIndex(e, "@"); i >= 0 {
			e = "…" + e[i:]
		}
		if i := strings.IndexAny(e, "?#"); i >= 0 {
			e = e[:i+1] + secret.Redacted
		}
		return e
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), secret.Redacted)
	}
	if u.RawQuery != "" {
		pairs := strings.Split(u.RawQuery, "&")
		for i, p := range pairs {
			// A key is kept only when it is plainly one: a word without
			// "=" or ";" may be the token itself.
			if k, _, ok := strings.Cut(p, "="); ok && k != "" && !strings.Contains(k, ";") {
				pairs[i] = k + "=" + secret.Redacted
			} else {
				pairs[i] = secret.Redacted
			}
		}
		u.RawQuery = strings.Join(pairs, "&")
	}
	if u.Fragment != "" || u.RawFragment != "" {
		u.Fragment, u.RawFragment = secret.Redacted, ""
	}
	return u.String()
}
