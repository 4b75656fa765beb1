package etcdstore

import (
	"context"
	"errors"
	"net"
	"path"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/store"
)

// kind is etcd's row of the store table, registered by this package.
var kind = store.Kind{
	Name:      name,
	Title:     "etcd",
	Summary:   "node IDs on etcd leases, a key prefix per namespace",
	Rank:      10,
	Segments:  true,
	Sites:     true,
	Ledgers:   true,
	Requires:  []string{"endpoints"},
	Namespace: namespace,
	Check:     check,
	Open:      open,
}

func init() { store.Register(kind) }

// name is the kind's name: --store etcd.
const name = "etcd"

// namespace spells the namespace called name: a key prefix under /firn/.
func namespace(name string) string { return "/firn/" + name + "/" }

// check refuses etcd settings open could not dial.
func check(s store.Settings) error {
	endpoints := s.EndpointList()
	if len(endpoints) == 0 {
		return store.Fieldf(s.Field("endpoints"), "%s %s needs %s", s.Flag("store"), name, s.Flag("endpoints"))
	}
	if err := s.CheckDialTimeout(); err != nil {
		return err
	}
	if err := checkEndpoints(s, endpoints); err != nil {
		return err
	}
	// One spelling per namespace, said by the operator: a prefix that
	// this package would have to rewrite is refused rather than moved.
	prefix := prefixOf(s)
	if c := path.Clean(prefix); !strings.HasPrefix(prefix, "/") || (prefix != c && prefix != c+"/") {
		return store.Fieldf(s.Field("namespace"), "%s %q: an etcd namespace is a clean key prefix starting with /, such as %q", s.Flag("namespace"), s.Namespace, path.Clean("/"+prefix)+"/")
	}
	return nil
}

// prefixOf is the key prefix the settings name.
func prefixOf(s store.Settings) string {
	if s.Namespace == "" {
		return namespace(store.DefaultName)
	}
	return s.Namespace
}

// checkEndpoints refuses an endpoint that is not a URL with a host and
// port, or host:port: bad input.
func checkEndpoints(s store.Settings, endpoints []string) error {
	for _, ep := range endpoints {
		u, hostport, err := store.DialAddr(ep)
		if err != nil || u != nil && (u.Scheme != "http" && u.Scheme != "https" || u.Host == "") {
			return store.Fieldf(s.Field("endpoints"), "%s %s: want http://host:port or https://host:port", s.Flag("endpoints"), store.Redact("endpoint", ep))
		}
		host, port, err := net.SplitHostPort(hostport)
		if _, perr := strconv.ParseUint(port, 10, 16); err != nil || host == "" || perr != nil {
			return store.Fieldf(s.Field("endpoints"), "%s %s: want host:port, such as http://127.0.0.1:2379", s.Flag("endpoints"), store.Redact("endpoint", ep))
		}
	}
	return nil
}

// open connects to etcd, and waits up to the dial timeout for an answer.
func open(ctx context.Context, s store.Settings) (*store.Conn, error) {
	endpoints, prefix := s.EndpointList(), prefixOf(s)
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: s.DialTimeout, Logger: zap.NewNop()})
	if err != nil {
		return nil, store.Fieldf(s.Field("endpoints"), "%s %s: %s", s.Flag("endpoints"), store.Redact("endpoint", strings.Join(endpoints, ",")), secret.Scrub(err.Error()))
	}
	if err := ping(ctx, s, cli, endpoints, prefix+"layout"); err != nil {
		_ = cli.Close()
		return nil, err
	}
	st := New(cli, prefix)
	return &store.Conn{Nodes: st, Segments: func() (segment.Store, error) { return st.Segments(), nil }, Close: cli.Close}, nil
}

// ping waits up to the dial timeout for one of the endpoints to answer a
// read of key (in the namespace, so a role limited to it may read it).
func ping(ctx context.Context, s store.Settings, cli *clientv3.Client, endpoints []string, key string) error {
	ctx, cancel := context.WithTimeout(ctx, s.DialTimeout)
	defer cancel()
	shown := make([]string, len(endpoints))
	for i, ep := range endpoints {
		shown[i] = store.Redact("endpoint", ep)
	}
	// A linearizable read answers only once the client reaches a member
	// that is part of a quorum.
	_, err := cli.Get(ctx, key, clientv3.WithCountOnly())
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = store.TimedOut(endpoints, err)
		}
		return &store.UnreachableError{Store: name, Endpoint: strings.Join(shown, ","), Timeout: s.DialTimeout, Err: err}
	}
	return nil
}
