package zkstore

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/store"
)

// kind is ZooKeeper's row of the store table, registered by this
// package. It holds node IDs only: segment counters need a database of
// their own beside it.
var kind = store.Kind{
	Name:      name,
	Title:     "ZooKeeper",
	Summary:   "node IDs on ZooKeeper sessions, a path per namespace; no segments",
	Rank:      40,
	Reserves:  true,
	Sites:     true,
	Requires:  []string{"endpoints"},
	Namespace: spell,
	Check:     check,
	Open:      open,
	Schema:    schema,
	SchemaOf:  "its znodes",
}

func init() { store.Register(kind) }

// name is the kind's name: --store zookeeper.
const name = "zookeeper"

// spell spells the namespace called name: a path under /firn.
func spell(name string) string { return "/firn/" + name }

// check refuses ZooKeeper settings open could not use: this package's
// own rules (servers, namespace, session timeout, digest), the dial
// timeout, the TLS and digest files.
func check(s store.Settings) error {
	_, err := storeOf(s)
	return err
}

// open opens a session within the dial timeout (and closes it), so an
// ensemble that does not answer is reported as the other stores are,
// naming its servers.
func open(ctx context.Context, s store.Settings) (*store.Conn, error) {
	st, err := storeOf(s)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, s.DialTimeout)
	defer cancel()
	if err := st.Ping(pctx); err != nil {
		servers := s.EndpointList()
		if errors.Is(pctx.Err(), context.DeadlineExceeded) {
			err = store.TimedOut(servers, err)
		}
		return nil, &store.UnreachableError{Store: name, Endpoint: strings.Join(servers, ","), Timeout: s.DialTimeout, Err: err}
	}
	return &store.Conn{Nodes: st, Close: st.Close}, nil
}

// storeOf is the store the settings name; it does no I/O but read the
// digest and TLS files.
func storeOf(s store.Settings) (*Store, error) {
	if s.DSN != "" {
		return nil, store.Fieldf(s.Field("dsn"), "%s is for %s %s", s.Flag("dsn"), s.Flag("store"), store.Names(store.IsDatabase))
	}
	if err := s.CheckDialTimeout(); err != nil {
		return nil, err
	}
	cfg := Config{Servers: s.EndpointList(), Namespace: namespaceOf(s), DialTimeout: s.DialTimeout,
		SessionTimeout: s.ZooKeeper.SessionTimeout, RetryPause: s.ZooKeeper.RetryPause}
	var err error
	if cfg.Digest, err = digestOf(s); err != nil {
		return nil, err
	}
	if cfg.TLS, err = tlsOf(s.ZooKeeper); err != nil {
		return nil, err
	}
	st, err := New(cfg)
	if err != nil {
		field := s.Field("endpoints")
		if errors.Is(err, ErrNamespace) {
			field = s.Field("namespace")
		}
		return nil, store.Fieldf(field, "%s %s: %s", s.Flag("store"), name, secret.Scrub(err.Error()))
	}
	return st, nil
}

// namespaceOf is the settings' namespace, or the default.
func namespaceOf(s store.Settings) string {
	if s.Namespace == "" {
		return spell(store.DefaultName)
	}
	return s.Namespace
}

// digestOf reads the digest credentials, user:password, from
// zookeeper.digest_file or the variable (not both). The password is
// remembered so that no message shows it; the file's and the variable's
// content is never quoted.
func digestOf(s store.Settings) (*Digest, error) {
	z := s.ZooKeeper
	file, value := z.DigestFile, z.Digest
	z.DigestVar = cmp.Or(z.DigestVar, "the digest credentials")
	switch {
	case file != "" && value != "":
		return nil, store.Fieldf("zookeeper.digest_file", "--zk-digest-file %s and %s both set: give the digest credentials once", secret.File(file), z.DigestVar)
	case file != "":
		b, err := secret.ReadFile(file)
		if err != nil {
			return nil, store.Fieldf("zookeeper.digest_file", "--zk-digest-file: %s", err)
		}
		value = strings.TrimSpace(string(b))
	case value == "":
		return nil, nil
	}
	from := "--zk-digest-file " + secret.File(file)
	if file == "" {
		from = z.DigestVar
	}
	user, password, ok := strings.Cut(value, ":")
	secret.Remember(password)
	if !ok || user == "" || password == "" {
		return nil, store.Fieldf("zookeeper.digest_file", "%s: want user:password, ZooKeeper's digest identity", from)
	}
	return &Digest{User: user, Password: password}, nil
}

// tlsOf is the TLS configuration of zookeeper.tls_*, or nil for a plain
// connection.
func tlsOf(z store.ZooKeeper) (*tls.Config, error) {
	if !z.TLS() {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if z.TLSCA != "" {
		pem, err := os.ReadFile(z.TLSCA)
		if err != nil {
			return nil, store.Fieldf("zookeeper.tls_ca", "--zk-tls-ca: %s", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, store.Fieldf("zookeeper.tls_ca", "--zk-tls-ca %s: no PEM certificate in it", z.TLSCA)
		}
	}
	if z.TLSCert != "" || z.TLSKey != "" {
		cert, err := secret.KeyPair(z.TLSCert, z.TLSKey)
		if err != nil {
			return nil, store.Fieldf("zookeeper.tls_cert", "--zk-tls-cert, --zk-tls-key: %s", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// schema lists the znodes a registry of these settings creates and their
// ACLs (Znodes), for firn schema: no server is needed.
func schema(s store.Settings) (string, error) {
	d, err := digestOf(s)
	if err != nil {
		return "", err
	}
	znodes, err := Znodes(namespaceOf(s), d)
	if err != nil {
		return "", store.Fieldf(s.Field("namespace"), "%s: %s", s.Flag("namespace"), settingMessage(err))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# ZooKeeper: the znodes firn creates (%s), each with its ACL.\n", store.Describe(s))
	b.WriteString("# firn creates what is missing on first use; N is a node's number. An ACL in\n# ZooKeeper's scheme:id perms form (c create, d delete, r read, w write, a admin).\n")
	for _, z := range znodes {
		fmt.Fprintf(&b, "%s\n    %s; ACL %s\n    %s\n", z.Path, z.Kind, z.ACL, z.What)
	}
	return b.String(), nil
}

// DialTree opens a session to another system's ensemble, servers
// (host:port, comma-separated, as flag names them), for its znodes under
// root: Meituan Leaf's /snowflake/{leaf.name}. It connects as Leaf does,
// with neither digest credentials nor TLS (Leaf's Curator client sets
// none), within the settings' dial timeout; an ensemble that does not
// answer is a *store.UnreachableError naming the servers.
func DialTree(ctx context.Context, s store.Settings, flag, servers, root string) (*Tree, error) {
	timeout := s.DialTimeout
	cfg := Config{Servers: strings.Split(servers, ","), Namespace: root, DialTimeout: timeout,
		SessionTimeout: s.ZooKeeper.SessionTimeout, RetryPause: s.ZooKeeper.RetryPause}
	if _, err := New(cfg); err != nil {
		return nil, &store.FieldError{Reason: fmt.Sprintf("%s %s: %s", flag, servers, settingMessage(err))}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t, err := OpenTree(ctx, cfg)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = store.TimedOut(cfg.Servers, err)
		}
		return nil, &store.UnreachableError{Store: name, Endpoint: servers, Timeout: timeout, Err: err}
	}
	return t, nil
}

// settingMessage is a refusal of a setting without the package's name,
// which the flag in front of it replaces.
func settingMessage(err error) string {
	var ce *ConfigError
	if errors.As(err, &ce) {
		return ce.Message()
	}
	return err.Error()
}
