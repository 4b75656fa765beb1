package zkstore

import "context"

// Znode is one znode, or one kind of znode, that the store creates: what
// firn schema prints for ZooKeeper in place of a table's DDL.
type Znode struct {
	Path string // N stands for a node's number
	Kind string // persistent or ephemeral
	ACL  string // who may do what, in ZooKeeper's scheme:id perms form
	What string
}

// Znodes lists what the store creates, in the order it creates it: the
// namespace's ancestors that do not exist yet, the namespace, its
// directories, the layout, and per node its owner, HWM and held znodes.
// The paths are the store's own, so the list cannot drift from them. A
// digest's password is never shown, nor its hash.
func (s *Store) Znodes() []Znode {
	return s.znodes()
}

// Znodes is Store.Znodes for a namespace and digest alone, without
// servers: what firn schema prints. The namespace is checked as New
// checks it.
func Znodes(ns string, d *Digest) ([]Znode, error) {
	prefix, err := namespace(ns)
	if err != nil {
		return nil, err
	}
	s := &Store{cfg: Config{Digest: d}, prefix: prefix}
	return s.znodes(), nil
}

func (s *Store) znodes() []Znode {
	own, above := "world:anyone cdrwa (no digest configured: anyone who reaches the ensemble may change it)", "world:anyone cdrwa"
	if d := s.cfg.Digest; d != nil {
		own, above = "digest:"+d.User+":… cdrwa (this identity alone)", "world:anyone cr (anyone may read it and create beside it; no one else may change or delete it)"
	}
	var out []Znode
	for _, p := range s.ancestors() {
		out = append(out, Znode{p, "persistent", above, "an ancestor of the namespace, created if missing"})
	}
	return append(out,
		Znode{s.prefix, "persistent", own, "the namespace"},
		Znode{s.ownerDir(), "persistent", own, "the owner records"},
		Znode{s.hwmDir(), "persistent", own, "the HWMs"},
		Znode{s.heldDir(), "persistent", own, "the held nodes"},
		Znode{s.layoutPath(), "persistent", own, "the namespace's record, its layout (or a site's or a ledger's record): the fingerprint, quoted, a newline and the description; " +
			"every claim and renewal checks its version, so rewriting it (firn site claim and release) ends every lease"},
		Znode{s.reservedPath(), "persistent", own, "the namespace's reservation, JSON: nodes no claim takes and a floor under every claim's HWM " +
			"(firn migrate check --from leaf-zookeeper --apply; firn admin unreserve lets a node out)"},
		Znode{s.ownerDir() + "/N", "persistent", own, "node N's owner token; every claim sets it, so its version names the current owner"},
		Znode{s.hwmDir() + "/N", "persistent", own, "node N's HWM in Unix milliseconds; it outlives every claim"},
		Znode{s.heldDir() + "/N", "ephemeral", own, "the holding claim's token, in the claim's own session"},
	)
}

// ancestors are the paths above the namespace, root first.
func (s *Store) ancestors() []string {
	var paths []string
	for i := 1; i < len(s.prefix); i++ {
		if s.prefix[i] == '/' {
			paths = append(paths, s.prefix[:i])
		}
	}
	return paths
}

// HWMDir is the path under which the namespace keeps its HWMs.
func (s *Store) HWMDir() string { return s.hwmDir() }

// Protected reports whether the store gives its znodes an ACL of one
// identity (Config.Digest). Without it, every znode it creates — the HWMs
// among them — can be changed by anyone who reaches the ensemble.
func (s *Store) Protected() bool { return s.cfg.Digest != nil }

// Ping opens a session and closes it: the ensemble answers, and accepts
// the digest credentials if any. Its error names the servers.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	sess, err := s.open(ctx, s.cfg.SessionTimeout)
	if err != nil {
		return err
	}
	sess.close()
	return nil
}
