package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/firn-id/firn/cmd/firn/internal/config"
)

// TestCheckListeners: off loopback, serve needs a node no other machine
// can also take, then auth; each refusal is bad input.
func TestCheckListeners(t *testing.T) {
	tests := []struct {
		name    string
		http    string
		node    string
		wantErr string
	}{
		{name: "loopback", http: "127.0.0.1:8080"},
		{name: "localhost", http: "localhost:8080"},
		{name: "local store's lowest free node", http: "0.0.0.0:8080", wantErr: "--http 0.0.0.0:8080 is not loopback: name a registry shared by every machine"},
		{name: "static node, no auth", http: "0.0.0.0:8080", node: "3", wantErr: "--http 0.0.0.0:8080 is not loopback: configure auth.tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Default()
			c.HTTP.Listen, c.Registry.Node = tt.http, tt.node
			auth, err := c.Auth.New()
			if err != nil {
				t.Fatal(err)
			}
			err = c.CheckListeners(auth)
			var ie *config.InputError
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (!errors.As(err, &ie) || !strings.HasPrefix(err.Error(), tt.wantErr)) {
				t.Fatalf("CheckListeners: %v; want %q", err, tt.wantErr)
			}
		})
	}
}

// TestLocalSegmentsOff: the local directory's counters serve one machine,
// so off loopback segment mode is off unless the operator says otherwise.
func TestLocalSegmentsOff(t *testing.T) {
	c := config.Default()
	if why := c.LocalSegmentsOff(); why != "" {
		t.Fatalf("on loopback: %q; want segments on", why)
	}
	c.HTTP.Listen = "0.0.0.0:8080"
	if why := c.LocalSegmentsOff(); !strings.HasPrefix(why, "segments are off") {
		t.Fatalf("off loopback: %q; want segments off", why)
	}
	c.Segments.Local = true
	if why := c.LocalSegmentsOff(); why != "" {
		t.Fatalf("--local-segments: %q; want segments on", why)
	}
}

// TestHTTPTLS: no certificate is no TLS; a pair that cannot be read is
// bad input naming the flags.
func TestHTTPTLS(t *testing.T) {
	if c, err := (config.HTTP{}).TLS(); c != nil || err != nil {
		t.Fatalf("no certificate: %v, %v; want nil, nil", c, err)
	}
	_, err := config.HTTP{TLSCert: t.TempDir() + "/missing.pem", TLSKey: t.TempDir() + "/missing.key"}.TLS()
	var ie *config.InputError
	if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "--tls-cert, --tls-key: ") {
		t.Fatalf("missing files: %v; want an *InputError naming --tls-cert, --tls-key", err)
	}
}

// TestServing: the default configuration gives the values firn serve
// runs with; a listener it would refuse is bad input (*InputError).
func TestServing(t *testing.T) {
	c := config.Default()
	s, err := c.Serving()
	if err != nil {
		t.Fatal(err)
	}
	if s.Auth == nil || s.TLS != nil || s.Opaque != nil || s.TagOpaque != nil {
		t.Errorf("Serving() = %+v: want auth, no TLS, no opaque mode", s)
	}
	if s.Lease.TTL != c.Registry.LeaseTTL {
		t.Errorf("lease %+v: want TTL %v", s.Lease, c.Registry.LeaseTTL)
	}
	c.HTTP.Listen = "0.0.0.0:8080"
	var ie *config.InputError
	if _, err := c.Serving(); !errors.As(err, &ie) {
		t.Errorf("off loopback: err %v (%T), want an *InputError", err, err)
	}
}
