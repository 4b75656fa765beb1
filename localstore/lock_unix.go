//go:build unix

package localstore

import (
	"errors"
	"os"
	"strings"
	"syscall"
)

// tryLock takes an exclusive, non-blocking OS lock on path, creating it,
// and writes holder into it. The lock ends when the file is closed or the
// process ends, however it ends. A lock held elsewhere gives busy, with
// what its holder wrote, lines trimmed.
func tryLock(path, holder string) (f *os.File, busy bool, heldBy []string, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, true, strings.Split(strings.TrimSpace(string(b)), "\n"), nil
		}
		return nil, false, nil, err
	}
	// What is written only names the holder in another process's error
	// message; the lock itself is the OS's.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(holder), 0)
	}
	return f, false, nil, nil
}

// lockFile takes an exclusive OS lock on path, creating it, and waits for
// it; unlock ends it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = f.Close() }, nil // closing the file ends the lock
}
