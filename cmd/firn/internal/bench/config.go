package bench

import (
	"crypto/tls"
	"io"
	"strings"
	"time"
)

// Config is one run's settings, as firn bench's flags give them. Its
// messages name those flags, because the command prints them as they are.
// A setting held by a pointer is optional: nil means "not given" and takes
// its default, while a value given is checked, so an explicit 0 is refused
// rather than taken for the default. Protocol, Batch and Duration have no
// default here, for the same reason: the command's flags supply them, and
// one given empty or 0 is refused.
type Config struct {
	// Target is the server: host:port of its gRPC listener for grpc,
	// stream and client (default 127.0.0.1:9090; several,
	// comma-separated, for client), or a base URL for http, leaf and
	// tinyid (default http://127.0.0.1:8080; https:// for TLS).
	Target string
	// Protocol is grpc, stream, http, client, leaf or tinyid.
	Protocol string
	// Mode is snowflake or segment; nil means segment when Tag is set or
	// Protocol is tinyid, snowflake otherwise.
	Mode *string
	// Tag is segment mode's tag (Leaf's key, Tinyid's bizType).
	Tag string
	// Batch is the IDs a request asks for, 1 to 100000; leaf: 1 only.
	Batch int
	// Workers is the number of concurrent callers, 1 to 10000; nil means
	// 8, or 64 with Rate.
	Workers *int
	// Rate is the requests a second of an open loop, 0.001 to 10000000;
	// nil means a closed loop.
	Rate *float64
	// Duration is how long the run lasts, more than 0.
	Duration time.Duration
	// Count stops the run after that many requests, 1 or more; nil means
	// no limit.
	Count *int64
	// Token is the bearer token (Tinyid: its token parameter).
	Token string
	// TLS asks for gRPC over TLS; over HTTP, TLS comes with an https://
	// Target.
	TLS bool
	// CA is a PEM file of the roots to trust instead of the system's
	// (implies TLS for gRPC).
	CA string
	// Insecure skips verifying the server's certificate (implies TLS for
	// gRPC); the report says so.
	Insecure bool
	// NoCheck skips the uniqueness check, which keeps every ID in memory.
	NoCheck bool
	// Progress, when not nil, receives a progress bar with the current
	// rate while the run lasts.
	Progress io.Writer
}

// settings is a validated Config with its defaults filled in.
type settings struct {
	targets  []string
	protocol string
	mode     string
	tag      string
	batch    int
	workers  int
	rate     float64
	duration time.Duration
	count    int64
	token    string
	tls      bool
	ca       string
	insecure bool
	tlsConf  *tls.Config // for gRPC with tls, and https:// targets
	check    bool
	progress io.Writer
}

// Validate reports whether Run would accept c; its refusals match
// ErrConfig.
func (c Config) Validate() error {
	_, err := c.settings()
	return err
}

// settings checks c and fills its defaults.
func (c Config) settings() (*settings, error) {
	s := &settings{protocol: c.Protocol, mode: "snowflake", tag: c.Tag, batch: c.Batch, duration: c.Duration,
		token: c.Token, tls: c.TLS, ca: c.CA, insecure: c.Insecure, check: !c.NoCheck, progress: c.Progress}
	if c.Mode != nil {
		s.mode = *c.Mode
	}
	if err := s.validateTarget(c.Target); err != nil {
		return nil, err
	}
	if err := s.validateMode(c.Mode != nil); err != nil {
		return nil, err
	}
	if err := s.validateNumbers(c); err != nil {
		return nil, err
	}
	if err := s.validateTLS(); err != nil {
		return nil, err
	}
	return s, nil
}

func (c *settings) validateTarget(target string) error {
	switch {
	case c.grpc():
		if target == "" {
			target = "127.0.0.1:9090"
		}
	case c.web():
		if target == "" {
			target = "http://127.0.0.1:8080"
		}
	default:
		return configErrorf("--protocol %q: want grpc, stream, http, client, leaf or tinyid", c.protocol)
	}
	c.targets = strings.Split(target, ",")
	if len(c.targets) > 1 && c.protocol != "client" {
		return configErrorf("--target names %d servers: only --protocol client spreads over several", len(c.targets))
	}
	for _, t := range c.targets {
		web := strings.HasPrefix(t, "http://") || strings.HasPrefix(t, "https://")
		if web != c.web() {
			want := "a gRPC host:port such as 127.0.0.1:9090"
			if !web {
				want = "a base URL such as http://127.0.0.1:8080"
			}
			return configErrorf("--target %q: --protocol %s wants %s", t, c.protocol, want)
		}
	}
	return nil
}

// grpc reports whether the protocol speaks gRPC to a host:port.
func (c *settings) grpc() bool {
	return c.protocol == "grpc" || c.protocol == "stream" || c.protocol == "client"
}

// web reports whether the protocol speaks HTTP to a base URL.
func (c *settings) web() bool {
	return c.protocol == "http" || c.protocol == "leaf" || c.protocol == "tinyid"
}

// validateMode checks the mode and tag. Without a mode given, a tag or
// the tinyid protocol (whose routes serve only segments) means segment.
func (c *settings) validateMode(given bool) error {
	if !given && (c.tag != "" || c.protocol == "tinyid") {
		c.mode = "segment"
	}
	switch {
	case c.mode != "snowflake" && c.mode != "segment":
		return configErrorf("--mode %q: want snowflake or segment", c.mode)
	case c.protocol == "tinyid" && c.mode != "segment":
		return configErrorf("--mode %s: Tinyid's routes serve segment tags only (its bizType is --tag)", c.mode)
	case c.protocol == "tinyid" && c.tag == "":
		return configErrorf("--protocol tinyid needs --tag, Tinyid's bizType")
	case c.mode == "snowflake" && c.tag != "":
		return configErrorf("--tag %q: tags are for --mode segment", c.tag)
	case c.mode == "segment" && c.tag == "":
		return configErrorf("--mode segment needs --tag (the tag: Leaf's key, Tinyid's bizType)")
	}
	return nil
}

// validateNumbers checks the numbers against their ranges; one not given
// takes its default, one given as 0 is refused.
func (c *settings) validateNumbers(cfg Config) error {
	if cfg.Rate != nil {
		c.rate = *cfg.Rate
	}
	if cfg.Workers != nil {
		c.workers = *cfg.Workers
	}
	if cfg.Count != nil {
		c.count = *cfg.Count
	}
	switch {
	case c.batch < 1 || c.batch > 100_000:
		return configErrorf("--batch %d: want 1 to 100000", c.batch)
	case c.protocol == "leaf" && c.batch != 1:
		return configErrorf("--batch %d: Leaf's routes return one ID a request", c.batch)
	case cfg.Rate != nil && !(c.rate >= 0.001 && c.rate <= 10_000_000):
		return configErrorf("--rate %g: want 0.001 to 10000000 requests per second (omit --rate for closed loop)", c.rate)
	case cfg.Workers != nil && (c.workers < 1 || c.workers > 10_000):
		return configErrorf("--workers %d: want 1 to 10000", c.workers)
	case c.duration <= 0:
		return configErrorf("--duration %s: want a positive duration", c.duration)
	case cfg.Count != nil && c.count < 1:
		return configErrorf("--count %d: want 1 or more (omit --count for no limit)", c.count)
	}
	if cfg.Workers == nil {
		c.workers = 8
		if c.rate > 0 {
			c.workers = 64
		}
	}
	return nil
}
