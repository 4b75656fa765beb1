package backend

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/firn-id/firn/internal/config"
	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/zkstore"
)

// DefaultZooKeeperNamespace is the ZooKeeper path of an empty namespace.
const DefaultZooKeeperNamespace = "/firn/default"

// noSegments says why a ZooKeeper registry serves no segments, and where
// they go instead.
const noSegments = "--store zookeeper holds no segment counters: keep them in a database of their own, " +
	"segments.store postgres or mysql with segments.dsn (--segment-store, --segment-dsn), or segments.stores"

// checkZooKeeper refuses ZooKeeper settings openZooKeeper could not use:
// zkstore's own rules (servers, namespace, session timeout, digest), the
// dial timeout, the TLS and digest files.
func checkZooKeeper(op *opener) error {
	_, err := op.zkStore()
	return err
}

// openZooKeeper opens a session within the dial timeout (and closes it),
// so an ensemble that does not answer is reported as the other stores
// are, naming its servers.
func openZooKeeper(ctx context.Context, op *opener) (*opened, error) {
	s, err := op.zkStore()
	if err != nil {
		return nil, err
	}
	timeout := op.Registry.DialTimeout
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := s.Ping(pctx); err != nil {
		servers, _ := etcdTarget(op.Registry)
		if errors.Is(pctx.Err(), context.DeadlineExceeded) {
			err = timedOut(servers, err)
		}
		return nil, &UnreachableError{Store: "zookeeper", Endpoint: strings.Join(servers, ","), Timeout: timeout, Err: err}
	}
	return &opened{nodes: s, close: s.Close}, nil
}

// zkStore is the ZooKeeper store the settings name; it does no I/O but
// read the digest and TLS files.
func (op *opener) zkStore() (*zkstore.Store, error) {
	if op.Registry.DSN != "" {
		return nil, configf("--dsn is for --store postgres or mysql")
	}
	if err := op.checkDialTimeout(); err != nil {
		return nil, err
	}
	servers, _ := etcdTarget(op.Registry)
	cfg := zkstore.Config{Servers: servers, Namespace: op.zkNamespace(), DialTimeout: op.Registry.DialTimeout,
		SessionTimeout: op.ZooKeeper.SessionTimeout, RetryPause: op.ZooKeeper.RetryPause}
	var err error
	if cfg.Digest, err = op.zkDigest(); err != nil {
		return nil, err
	}
	if cfg.TLS, err = zkTLS(op.ZooKeeper); err != nil {
		return nil, err
	}
	s, err := zkstore.New(cfg)
	if err != nil {
		return nil, configf("--store zookeeper: %s", secret.Scrub(err.Error()))
	}
	return s, nil
}

// zkDigest reads the digest credentials, user:password, from
// zookeeper.digest_file or the variable config.DigestVar (not both). The
// password is remembered so that no message shows it; the file's and the
// variable's content is never quoted.
func (op *opener) zkDigest() (*zkstore.Digest, error) {
	file, value := op.ZooKeeper.DigestFile, op.ZooKeeperDigest
	switch {
	case file != "" && value != "":
		return nil, configf("--zk-digest-file %s and %s both set: give the digest credentials once", secret.File(file), config.DigestVar)
	case file != "":
		b, err := secret.ReadFile(file)
		if err != nil {
			return nil, configf("--zk-digest-file: %s", err)
		}
		value = strings.TrimSpace(string(b))
	case value == "":
		return nil, nil
	}
	from := "--zk-digest-file " + secret.File(file)
	if file == "" {
		from = config.DigestVar
	}
	user, password, ok := strings.Cut(value, ":")
	secret.Remember(password)
	if !ok || user == "" || password == "" {
		return nil, configf("%s: want user:password, ZooKeeper's digest identity", from)
	}
	return &zkstore.Digest{User: user, Password: password}, nil
}

// zkTLS is the TLS configuration of zookeeper.tls_*, or nil for a plain
// connection.
func zkTLS(z config.ZooKeeper) (*tls.Config, error) {
	if !z.TLS() {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if z.TLSCA != "" {
		pem, err := os.ReadFile(z.TLSCA)
		if err != nil {
			return nil, configf("--zk-tls-ca: %s", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, configf("--zk-tls-ca %s: no PEM certificate in it", z.TLSCA)
		}
	}
	if z.TLSCert != "" || z.TLSKey != "" {
		cert, err := secret.KeyPair(z.TLSCert, z.TLSKey)
		if err != nil {
			return nil, configf("--zk-tls-cert, --zk-tls-key: %s", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// SegmentsOff is why the registry's store serves no segments, or "" when
// it does: ZooKeeper holds no segment counters, so without a database of
// their own (segments.store or segments.stores) segment mode is off.
func (o Options) SegmentsOff() string {
	if o.Registry.Store == "zookeeper" && o.Segments.Store == "" && len(o.Segments.Stores) == 0 {
		return fmt.Sprintf("segments are off: %s", noSegments)
	}
	return ""
}

// zkNamespace is the registry's namespace, or ZooKeeper's default.
func (o Options) zkNamespace() string {
	if o.Registry.Namespace == "" {
		return DefaultZooKeeperNamespace
	}
	return o.Registry.Namespace
}

// Znodes lists the znodes a ZooKeeper registry of these settings creates
// and their ACLs (zkstore.Znodes), for firn schema: no server is needed.
func (o Options) Znodes() ([]zkstore.Znode, error) {
	op := &opener{Options: o}
	d, err := op.zkDigest()
	if err != nil {
		return nil, err
	}
	z, err := zkstore.Znodes(o.zkNamespace(), d)
	if err != nil {
		return nil, configf("--namespace: %s", zkMessage(err))
	}
	return z, nil
}

// OpenTree opens a session to another system's ensemble, servers
// (host:port, comma-separated, as flag names them), for its znodes under
// root: Meituan Leaf's /snowflake/{leaf.name}. It connects as Leaf does,
// with neither digest credentials nor TLS (Leaf's Curator client sets
// none), within the registry's dial timeout; an ensemble that does not
// answer is an *UnreachableError naming the servers.
func (o Options) OpenTree(ctx context.Context, flag, servers, root string) (*zkstore.Tree, error) {
	timeout := o.Registry.DialTimeout
	cfg := zkstore.Config{Servers: strings.Split(servers, ","), Namespace: root, DialTimeout: timeout,
		SessionTimeout: o.ZooKeeper.SessionTimeout, RetryPause: o.ZooKeeper.RetryPause}
	if _, err := zkstore.New(cfg); err != nil {
		return nil, configf("%s %s: %s", flag, servers, zkMessage(err))
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t, err := zkstore.OpenTree(ctx, cfg)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = timedOut(cfg.Servers, err)
		}
		return nil, &UnreachableError{Store: "zookeeper", Endpoint: servers, Timeout: timeout, Err: err}
	}
	return t, nil
}

// zkMessage is zkstore's refusal of a setting without the package's name,
// which the flag in front of it replaces.
func zkMessage(err error) string {
	var ce *zkstore.ConfigError
	if errors.As(err, &ce) {
		return ce.Message()
	}
	return err.Error()
}
