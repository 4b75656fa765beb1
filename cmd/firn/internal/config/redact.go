package config

import (
	"slices"

	"github.com/firn-id/firn/internal/secret"
	"gopkg.in/yaml.v3"
)

// Redacted returns c as YAML with secrets hidden: every token's secret,
// the opaque key, the name of a file holding a secret (a key, a token's
// secret, ZooKeeper's digest) that names no file (it may be the secret
// itself: secret.File), and what hide leaves of each DSN and etcd endpoint. hide is given the
// kind of value — "endpoint" for an etcd endpoint, the store's name
// (postgres, mysql, or any other) for a DSN — and the value; it is the command's redaction, which reads
// DSNs with the SQL drivers this package may not import.
func (c *Config) Redacted(hide func(kind, value string) string) ([]byte, error) {
	r := c.redacted(hide)
	return yaml.Marshal(&r)
}

// redacted is c with what Redacted hides hidden.
func (c *Config) redacted(hide func(kind, value string) string) Config {
	r := *c
	r.Registry.DSN = hide(r.Registry.Store, r.Registry.DSN)
	r.Registry.Endpoints = slices.Clone(r.Registry.Endpoints)
	for i, e := range r.Registry.Endpoints {
		r.Registry.Endpoints[i] = hide("endpoint", e)
	}
	r.Segments.DSN = hide(r.Segments.Store, r.Segments.DSN)
	r.Ledger.DSN = hide(r.Ledger.Store, r.Ledger.DSN)
	r.Ledger.Endpoints = slices.Clone(r.Ledger.Endpoints)
	for i, e := range r.Ledger.Endpoints {
		r.Ledger.Endpoints[i] = hide("endpoint", e)
	}
	r.Segments.Stores = slices.Clone(r.Segments.Stores)
	for i, st := range r.Segments.Stores {
		r.Segments.Stores[i].DSN = hide(st.Store, st.DSN)
	}
	r.Auth.Tokens = slices.Clone(r.Auth.Tokens)
	for i, t := range r.Auth.Tokens {
		r.Auth.Tokens[i].Secret, r.Auth.Tokens[i].SecretFile = secret.Redacted, secret.File(t.SecretFile)
	}
	if r.Opaque.Key != "" {
		r.Opaque.Key = secret.Redacted
	}
	r.Opaque.KeyFile, r.HTTP.TLSKey = secret.File(r.Opaque.KeyFile), secret.File(r.HTTP.TLSKey)
	r.ZooKeeper.DigestFile, r.ZooKeeper.TLSKey = secret.File(r.ZooKeeper.DigestFile), secret.File(r.ZooKeeper.TLSKey)
	return r
}
