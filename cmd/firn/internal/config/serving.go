package config

import (
	"crypto/tls"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// Serving is what firn serve runs with beside its configuration: the
// values derived from it, read, parsed and loaded from the files it
// names. A plain setting is read from the Config, never copied here.
type Serving struct {
	Layout snowflake.Layout
	Lease  nodeid.Config
	// Gen is the generator's configuration but its node and reservation.
	Gen snowflake.Config
	// Auth checks the tokens and anonymous scopes of the configuration.
	Auth *server.Auth
	// TLS is the loaded certificate and key, or nil.
	TLS *tls.Config
	// MaxID bounds the IDs of the tags listed in segments.javascript_safe.
	MaxID func(tag string) int64
	// Opaque, in opaque mode, permutes every snowflake ID served.
	Opaque *opaque.Permutation
	// TagOpaque returns the permutation of an opaque tag (opaque.tags),
	// nil for a plain one; nil when no tag is opaque.
	TagOpaque func(tag string) segment.Permutation
}

// Serving turns a valid configuration (Validate) into what firn serve
// runs with, refusing what it would refuse before opening a store. The
// files are read now, before any store is opened or node claimed: a
// missing key is bad input, not a server that fails after announcing
// itself.
func (c *Config) Serving() (s Serving, err error) {
	if s.Auth, err = c.Auth.New(); err != nil { // Validate ran the same rules
		return s, &InputError{Msg: err.Error()}
	}
	if err := c.CheckListeners(s.Auth); err != nil {
		return s, err
	}
	if s.TLS, err = c.HTTP.TLS(); err != nil {
		return s, err
	}
	if s.Layout, err = c.Layout.Snowflake(); err != nil {
		return s, err
	}
	if err := CheckGenerates(s.Layout, time.Now()); err != nil {
		return s, err
	}
	if err := c.Snowflake.CheckJavaScriptSafe(s.Layout); err != nil {
		return s, err
	}
	s.MaxID = c.Segments.MaxID()
	if s.Opaque, err = c.Opaque.Permutation(s.Layout); err != nil {
		return s, err
	}
	if s.TagOpaque, err = c.Opaque.TagPermutations(s.MaxID); err != nil {
		return s, err
	}
	if s.Gen, err = c.Generator(s.Layout); err != nil {
		return s, err
	}
	s.Lease, err = c.Registry.Lease(s.Layout, s.Opaque, c.Site)
	s.Lease.TTL = c.Registry.LeaseTTL
	return s, err
}
