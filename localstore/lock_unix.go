//go:build unix

package localstore

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockDir takes an exclusive, non-blocking OS lock on dir/lock and writes
// this process's ID into it. The lock ends with the process.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir+"/lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid, _ := os.ReadFile(dir + "/lock")
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{Dir: dir, PID: strings.TrimSpace(string(pid))}
		}
		return nil, err
	}
	// The PID only names the holder in another process's error message.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
