package config

import (
	"errors"
	"strconv"
	"strings"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/snowflake"
)

// NodeFor is the node registry.node names for layout l: nil for the lowest
// free one in the store, a value for a static or derived node. Serve and
// firn next both take their node from here.
func (r Registry) NodeFor(l snowflake.Layout) (*uint64, error) {
	var node uint64
	var err error
	switch r.Node {
	case "":
		return nil, nil
	case "derived":
		node, err = derivedNode(l, r.AcceptCollisionRisk)
	default:
		node, err = parseNode(l, r.Node)
	}
	if err != nil {
		return nil, err
	}
	return &node, nil
}

// Reserved is registry.reserved_nodes, each checked to be a node of
// layout l.
func (r Registry) Reserved(l snowflake.Layout) ([]uint64, error) {
	for _, v := range r.ReservedNodes {
		if v > l.MaxNode() {
			return nil, inputf("--reserved-nodes: %d is not a node of layout %s (0..%d)", v, l.Name, l.MaxNode())
		}
	}
	return r.ReservedNodes, nil
}

// Generator is the generator's configuration for layout l from the
// settings, for serve and firn next alike; the caller sets Node and
// Reservation once it holds a lease.
func (c *Config) Generator(l snowflake.Layout) (snowflake.Config, error) {
	p, err := c.Snowflake.Policy()
	if err != nil {
		return snowflake.Config{}, err
	}
	return snowflake.Config{Layout: l, Exhausted: p, MaxBorrow: c.Snowflake.MaxBorrow, StartAhead: c.Registry.StartAhead}, nil
}

// derivedNode derives the node from the host's IP, once its risk is
// acknowledged: nothing can see a second host with the same bits.
func derivedNode(l snowflake.Layout, accepted bool) (uint64, error) {
	if !accepted {
		return 0, inputf("--node derived cannot see a second host with the same address bits: add --accept-collision-risk to accept that")
	}
	ip, err := nodeid.HostIP()
	if err != nil {
		return 0, err
	}
	node, err := nodeid.DeriveFromIP(ip, l.NodeBits())
	if err != nil {
		return 0, inputf("%s", err)
	}
	return node, nil
}

// parseNode reads --node: one number for the whole node part, or one per
// node field.
func parseNode(l snowflake.Layout, s string) (uint64, error) {
	parts := strings.Split(s, ",")
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(strings.TrimSpace(p), 10, 64)
		if err != nil {
			return 0, inputf("--node %q: want a non-negative number, or one per node field", s)
		}
		vals[i] = v
	}
	if len(vals) == 1 {
		if vals[0] > l.MaxNode() {
			return 0, inputf("--node %d out of range: layout %s has %d node bits (0..%d)", vals[0], l.Name, l.NodeBits(), l.MaxNode())
		}
		return vals[0], nil
	}
	node, err := l.NodeValue(vals...)
	var re *snowflake.RangeError
	var fe *snowflake.NodeFieldsError
	switch {
	case errors.As(err, &re):
		return 0, inputf("--node %q: %s out of range 0..%d", s, re.What, re.Max)
	case errors.As(err, &fe):
		return 0, inputf("--node %q: %s", s, fe.Reason())
	case err != nil:
		return 0, err
	}
	return node, nil
}

// Lease is the lease configuration of a process issuing IDs of layout l,
// opaque under perm (nil for plain IDs): the ID space the store records
// (SpaceID), the layout's node bits, and registry.node,
// registry.reserved_nodes and registry.start_ahead. The TTL and the
// window are the caller's: they differ between a server and a one-shot
// command.
func (r Registry) Lease(l snowflake.Layout, perm *opaque.Permutation, site Site) (nodeid.Config, error) {
	c := nodeid.Config{NodeBits: l.NodeBits(), Layout: SpaceID(l, perm), StartAhead: r.StartAhead}
	var err error
	if c.Site, err = site.Nodes(l); err != nil {
		return c, err
	}
	if c.Reserved, err = r.Reserved(l); err != nil {
		return c, err
	}
	c.Node, err = r.NodeFor(l)
	return c, err
}
