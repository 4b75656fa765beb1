package config

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/store"
)

// CheckListeners keeps the implicit local default, and a service without
// tokens, on loopback: off it, HTTP needs tokens or anonymous grants
// (auth.anonymous lifts this rule and no other), gRPC tokens (anonymous
// grants cover HTTP only). The addresses are host:port (Validate checked
// them); auth is what Auth.New made of the settings.
func (c *Config) CheckListeners(auth *server.Auth) error {
	// Off loopback the node must come from a shared registry (etcd, SQL)
	// or be the operator's: a local store picking "the lowest free node"
	// gives node 0 on every machine, explicit or not.
	r := c.Registry
	explicitStore := !isKind(r.Store, func(k store.Kind) bool { return k.DataDir }) || r.Node != "" || !c.Snowflake.Enabled
	if err := checkListen("http", c.HTTP.Listen, explicitStore, auth); err != nil {
		return err
	}
	if c.GRPC.Listen != "off" {
		return checkListen("grpc", c.GRPC.Listen, explicitStore, auth)
	}
	return nil
}

// checkListen is CheckListeners' rule for one listener; flag names it in
// messages.
func checkListen(flag, addr string, explicitStore bool, auth *server.Auth) error {
	if loopback(addr) {
		return nil
	}
	switch {
	case !explicitStore:
		return inputf("--%s %s is not loopback: name a registry shared by every machine (--store etcd|postgres|mysql), or this machine's own node (--node N, static); two machines on the local store's lowest free node would issue the same IDs", flag, addr)
	case flag == "grpc" && !auth.HasTokens():
		return inputf("--grpc %s is not loopback: configure auth.tokens (docs/config.md), or --grpc off; auth.anonymous opens HTTP routes only", addr)
	case !auth.Enabled():
		return inputf("--%s %s is not loopback: configure auth.tokens, or auth.anonymous for chosen ID routes (docs/config.md); without either firn serve serves loopback only", flag, addr)
	}
	return nil
}

// LocalSegmentsOff is why serve turns segment mode off, or "" when it
// does not. Segments from the local directory serve one machine: off
// loopback, machines behind one address would each count the same IDs.
func (c *Config) LocalSegmentsOff() string {
	sg := c.Segments
	if isKind(c.Registry.Store, func(k store.Kind) bool { return k.DataDir }) && len(sg.Stores) == 0 && sg.Store == "" && !sg.Local &&
		(!loopback(c.HTTP.Listen) || (c.GRPC.Listen != "off" && !loopback(c.GRPC.Listen))) {
		return "segments are off: this server listens off loopback on the local data directory, " +
			"whose counters serve one machine (machines behind one address would each hand out the same IDs); " +
			"name shared segment databases (segments.stores) or a shared store (--store etcd|postgres|mysql), " +
			"or --local-segments if this machine alone serves its tags"
	}
	return ""
}

// loopback reports whether a listen address is on loopback.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return err == nil && (host == "localhost" || (ip != nil && ip.IsLoopback()))
}

// CheckFloor refuses a generator whose first ID would not exceed floor
// (snowflake.floor), the largest ID a previous system issued: serve's
// node.Holder runs it on every new generator, at start and after each
// lost lease (another node may start lower), and firn next on its own.
// In opaque mode (perm set) the floor is an opaque ID of the namespace,
// revealed before it is compared: opaque IDs are not ordered.
func CheckFloor(g *snowflake.Generator, floor uint64, perm *opaque.Permutation) error {
	if floor == 0 {
		return nil
	}
	plain := floor
	if perm != nil {
		var err error
		if plain, err = perm.Decode(floor); err != nil {
			return inputf("snowflake.floor: ID %d does not fit the %d-bit opaque space", floor, perm.Bits())
		}
	}
	l := g.Layout()
	tick := uint64(g.Now().Sub(l.Epoch) / l.Tick)
	first, err := l.Compose(min(tick, l.MaxTick()), g.Node(), 0)
	if err == nil && first > plain {
		return nil
	}
	if perm != nil {
		return fmt.Errorf("snowflake floor %d (opaque; revealed, %d): the first ID would be about %d before the permutation, not above it; "+
			"move the node past it with firn admin advance --node %d --past-id %d and the opaque flags, or check the layout and epoch", floor, plain, first, g.Node(), floor)
	}
	return fmt.Errorf("snowflake floor %d: the first ID would be about %d, not above it; "+
		"move the node past it with firn admin advance --node %d --past-id %d, or check the layout and epoch", floor, first, g.Node(), floor)
}

// TLS reads the listener's certificate and key into the TLS
// configuration firn serve listens with (TLS 1.2 at least), or returns
// nil when none is set. A pair that cannot be read is an *InputError;
// the key file's name is printed only when it names a file
// (secret.File): a key pasted in its place is never echoed.
func (h HTTP) TLS() (*tls.Config, error) {
	if h.TLSCert == "" {
		return nil, nil
	}
	cert, err := secret.KeyPair(h.TLSCert, h.TLSKey)
	if err != nil {
		return nil, inputf("--tls-cert, --tls-key: %s", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
