package zkstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
)

// Digest is a ZooKeeper digest identity. It travels in clear unless the
// connection to the ensemble is TLS; it is never printed.
type Digest struct {
	User, Password string
}

// String names the user and hides the password, so a Digest printed by
// mistake leaks no secret.
func (d Digest) String() string { return d.User + ":<redacted>" }

// GoString is String for %#v.
func (d Digest) GoString() string {
	return fmt.Sprintf("zkstore.Digest{User: %q, Password: <redacted>}", d.User)
}

func (d *Digest) validate() error {
	switch {
	case d.User == "" || d.Password == "":
		return &ConfigError{Words: "digest credentials need a user and a password"}
	case strings.Contains(d.User, ":"):
		return &ConfigError{Words: "digest user must not contain ':'"}
	}
	return nil
}

// acls returns the ACL of the znodes the store creates in its namespace:
// with a digest configured, that identity alone; without, anyone — which
// Exposed reports. Ancestors of the namespace that the store creates get
// read and create for anyone, so other namespaces can live beside it,
// but no one else may change or delete them.
func acls(d *Digest) (own, ancestor []zk.ACL) {
	if d == nil {
		return zk.WorldACL(zk.PermAll), zk.WorldACL(zk.PermAll)
	}
	return zk.DigestACL(zk.PermAll, d.User, d.Password), zk.WorldACL(zk.PermRead | zk.PermCreate)
}

// authenticate adds the store's digest to a new session (open calls it);
// the client sends it again on every reconnection.
func (s *Store) authenticate(ctx context.Context, conn *zk.Conn) error {
	if s.cfg.Digest == nil {
		return nil
	}
	auth := []byte(s.cfg.Digest.User + ":" + s.cfg.Digest.Password)
	_, err := do(ctx, func() (struct{}, error) { return struct{}{}, conn.AddAuth("digest", auth) })
	if err != nil {
		return s.fail("authenticate as "+s.cfg.Digest.User, err)
	}
	return nil
}

// Exposed lists the namespace's znodes that anyone may change: the HWMs
// and owner records above all, which an unauthenticated client could
// otherwise lower or rewrite. Empty when every znode carries an ACL of
// one identity. A namespace never used has nothing to list.
func (s *Store) Exposed(ctx context.Context) ([]string, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	sess, err := s.open(ctx, s.cfg.SessionTimeout)
	if err != nil {
		return nil, err
	}
	defer sess.close()
	paths := []string{s.prefix, s.layoutPath(), s.ownerDir(), s.hwmDir(), s.heldDir(), s.reservedPath()}
	for _, dir := range []string{s.ownerDir(), s.hwmDir()} {
		kids, err := do(ctx, func() ([]string, error) {
			k, _, err := sess.conn.Children(dir)
			return k, err
		})
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, s.fail("list "+dir, err)
		}
		for _, k := range kids {
			paths = append(paths, dir+"/"+k)
		}
	}
	var open []string
	for _, p := range paths {
		acl, err := do(ctx, func() ([]zk.ACL, error) {
			a, _, err := sess.conn.GetACL(p)
			return a, err
		})
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, s.fail("read the ACL of "+p, err)
		}
		for _, a := range acl {
			if a.Scheme == "world" && a.ID == "anyone" && a.Perms&(zk.PermWrite|zk.PermDelete|zk.PermAdmin) != 0 {
				open = append(open, p)
				break
			}
		}
	}
	return open, nil
}
