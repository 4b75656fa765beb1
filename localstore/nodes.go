package localstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A node's state lives in two places: its lock and its HWM in the user's
// node directory (and in each node directory an older firn kept per
// layout: nodeDirs), which every data directory of the user shares, and
// a copy of the HWM in the data directory (where it always was). A claim
// starts at the largest of the HWMs; an extension is confirmed only once
// all hold it, the node directories' written first, since every data
// directory's claims read them. Each file is then at or past every
// confirmed HWM of the node, so a crash between the writes never lets a
// claim start below an issued ID.

// heldLock is one lock file of a node this Store holds.
type heldLock struct {
	path string
	f    *os.File
}

// lockNode takes node's lock in every node directory (nodeDirs) for this
// Store, or returns a *NodeHeldError naming a holder. A lock the Store
// holds already is kept while its files are still the node-N.lock files.
func (s *Store) lockNode(node uint64) error {
	if _, ok := s.nodes[node]; ok {
		if s.lockIntact(node) {
			return nil
		}
		s.unlockNode(node)
	}
	dirs, err := nodeDirs(s.nodeRoot)
	if err != nil {
		return fmt.Errorf("lock node %d: %w", node, err)
	}
	locks := make([]heldLock, 0, len(dirs))
	for _, d := range dirs {
		path := lockPath(d, node)
		f, busy, heldBy, err := tryLock(path, strconv.Itoa(os.Getpid())+"\n"+s.dir+"\n")
		switch {
		case err != nil:
			closeLocks(locks)
			return fmt.Errorf("lock node %d: %w", node, err)
		case busy:
			closeLocks(locks)
			e := &NodeHeldError{Node: node, Lock: path, PID: heldBy[0]}
			if len(heldBy) > 1 {
				e.Dir = heldBy[1]
			}
			return e
		}
		locks = append(locks, heldLock{path: path, f: f})
	}
	s.nodes[node] = locks
	if !s.lockIntact(node) {
		// Unlinked between the open and the lock: it guards nothing.
		s.unlockNode(node)
		return fmt.Errorf("lock node %d: a lock file in %s was removed while it was being locked", node, s.nodeRoot)
	}
	return nil
}

// lockIntact reports whether each file this Store locked for node is
// still the node-N.lock at its path. A lock file removed (say, as
// "stale") and created again is another file, which another Store can
// lock: the OS lock on the old one then keeps no one off the node.
func (s *Store) lockIntact(node uint64) bool {
	locks, ok := s.nodes[node]
	if !ok {
		return false
	}
	for _, l := range locks {
		held, err := l.f.Stat()
		if err != nil {
			return false
		}
		now, err := os.Stat(l.path)
		if err != nil || !os.SameFile(held, now) {
			return false
		}
	}
	return true
}

// unlockNode gives node's locks up, if the Store holds them.
func (s *Store) unlockNode(node uint64) {
	if locks, ok := s.nodes[node]; ok {
		delete(s.nodes, node)
		closeLocks(locks)
	}
}

func closeLocks(locks []heldLock) {
	for _, l := range locks {
		_ = l.f.Close() // closing the file ends the lock
	}
}

func lockPath(dir string, node uint64) string {
	return filepath.Join(dir, "node-"+strconv.FormatUint(node, 10)+".lock")
}

// nodeLockPath is node's lock in the user's node directory.
func (s *Store) nodeLockPath(node uint64) string { return lockPath(s.nodeRoot, node) }

// sharedHWMPaths are node's HWM files in the node directories whose locks
// the Store holds for it, the user's node directory's first.
func (s *Store) sharedHWMPaths(node uint64) []string {
	var paths []string
	for _, l := range s.nodes[node] {
		paths = append(paths, filepath.Join(filepath.Dir(l.path), "node-"+strconv.FormatUint(node, 10)+".hwm"))
	}
	return paths
}

func (s *Store) hwmPath(node uint64) string {
	return filepath.Join(s.dir, "nodes", strconv.FormatUint(node, 10)+".hwm")
}

// readHWM returns node's HWM: the largest of the node directories' and
// the data directory's. The caller holds the node's locks.
func (s *Store) readHWM(node uint64) (int64, error) {
	hwm, err := readHWMFile(s.hwmPath(node), node)
	if err != nil {
		return 0, err
	}
	for _, p := range s.sharedHWMPaths(node) {
		shared, err := readHWMFile(p, node)
		if err != nil {
			return 0, err
		}
		hwm = max(hwm, shared)
	}
	return hwm, nil
}

// raise writes hwm for node, durably, to each file whose value is below
// it, the node directories' first, and returns the smallest of the
// values after: the HWM all hold, which is what may be confirmed. The
// caller holds the node's locks.
func (s *Store) raise(node uint64, hwm int64) (int64, error) {
	var confirmed int64
	for i, p := range append(s.sharedHWMPaths(node), s.hwmPath(node)) {
		stored, err := raiseFile(p, node, hwm)
		if err != nil {
			return 0, err
		}
		if i == 0 || stored < confirmed {
			confirmed = stored
		}
	}
	return confirmed, nil
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
