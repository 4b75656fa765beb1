package localstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A node's state lives in two places: its lock and its HWM in the node
// directory, which every data directory of the user shares, and a copy of
// the HWM in the data directory (where it always was). A claim starts at
// the larger of the two HWMs; an extension is confirmed only once both
// hold it, the node directory's written first, since every data
// directory's claims read it. Each file is then at or past every
// confirmed HWM of the node, so a crash between the two writes never
// lets a claim start below an issued ID.

// lockNode takes node's lock in the node directory for this Store, or
// returns a *NodeHeldError naming its holder. A lock the Store holds
// already is kept while its file is still node-N.lock.
func (s *Store) lockNode(node uint64) error {
	if _, ok := s.nodes[node]; ok {
		if s.lockIntact(node) {
			return nil
		}
		s.unlockNode(node)
	}
	path := s.nodeLockPath(node)
	f, busy, heldBy, err := tryLock(path, strconv.Itoa(os.Getpid())+"\n"+s.dir+"\n")
	switch {
	case err != nil:
		return fmt.Errorf("lock node %d: %w", node, err)
	case busy:
		e := &NodeHeldError{Node: node, Lock: path, PID: heldBy[0]}
		if len(heldBy) > 1 {
			e.Dir = heldBy[1]
		}
		return e
	}
	s.nodes[node] = f
	if !s.lockIntact(node) {
		// Unlinked between the open and the lock: it guards nothing.
		s.unlockNode(node)
		return fmt.Errorf("lock node %d: %s was removed while it was being locked", node, path)
	}
	return nil
}

// lockIntact reports whether the file this Store locked for node is
// still node-N.lock. A lock file removed (say, as "stale") and created
// again is another file, which another Store can lock: the OS lock on
// the old one then keeps no one off the node.
func (s *Store) lockIntact(node uint64) bool {
	f, ok := s.nodes[node]
	if !ok {
		return false
	}
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(s.nodeLockPath(node))
	return err == nil && os.SameFile(held, now)
}

// unlockNode gives node's lock up, if the Store holds it.
func (s *Store) unlockNode(node uint64) {
	if f, ok := s.nodes[node]; ok {
		delete(s.nodes, node)
		_ = f.Close() // closing the file ends the lock
	}
}

func (s *Store) nodeLockPath(node uint64) string {
	return filepath.Join(s.nodeDir, "node-"+strconv.FormatUint(node, 10)+".lock")
}

func (s *Store) sharedHWMPath(node uint64) string {
	return filepath.Join(s.nodeDir, "node-"+strconv.FormatUint(node, 10)+".hwm")
}

func (s *Store) hwmPath(node uint64) string {
	return filepath.Join(s.dir, "nodes", strconv.FormatUint(node, 10)+".hwm")
}

// readHWM returns node's HWM: the larger of the node directory's and the
// data directory's. The caller holds the node's lock.
func (s *Store) readHWM(node uint64) (int64, error) {
	shared, err := readHWMFile(s.sharedHWMPath(node), node)
	if err != nil {
		return 0, err
	}
	own, err := readHWMFile(s.hwmPath(node), node)
	if err != nil {
		return 0, err
	}
	return max(shared, own), nil
}

// raise writes hwm for node, durably, to each file whose value is below
// it, the node directory's first, and returns the smaller of the two
// values after: the HWM both hold, which is what may be confirmed. The
// caller holds the node's lock.
func (s *Store) raise(node uint64, hwm int64) (int64, error) {
	shared, err := raiseFile(s.sharedHWMPath(node), node, hwm)
	if err != nil {
		return 0, err
	}
	own, err := raiseFile(s.hwmPath(node), node, hwm)
	if err != nil {
		return 0, err
	}
	return min(shared, own), nil
}

// readHWMFile reads an HWM file; one that does not exist holds 0.
func readHWMFile(path string, node uint64) (int64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read HWM of node %d: %w", node, err)
	}
	hwm, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read HWM of node %d: %s is corrupt: %q", node, path, b)
	}
	return hwm, nil
}

// raiseFile writes hwm to path if it is above the stored value, durably,
// and returns the stored value after. It never lowers it.
func raiseFile(path string, node uint64, hwm int64) (int64, error) {
	cur, err := readHWMFile(path, node)
	if err != nil || hwm <= cur {
		return cur, err
	}
	if err := writeFile(path, []byte(strconv.FormatInt(hwm, 10)+"\n")); err != nil {
		return cur, fmt.Errorf("write HWM of node %d: %w", node, err)
	}
	return hwm, nil
}
