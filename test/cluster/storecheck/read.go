package storecheck

import (
	"cmp"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/firn-id/firn/internal/storelog"
)

// LogSuffix ends the name of every process life's store log in a run's
// directory; LogName gives the whole name.
const LogSuffix = ".ops.jsonl"

// LogName is the store log's file name of a process life ("f0#2").
func LogName(life string) string { return strings.ReplaceAll(life, "#", "-") + LogSuffix }

// ReadDir reads every store log in dir, compressed (LogSuffix+".gz") or
// not, and returns their operations and how many logs there were.
func ReadDir(dir string) ([]storelog.Op, int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	var ops []storelog.Op
	logs := 0
	for _, e := range entries {
		name := e.Name()
		proc, ok := strings.CutSuffix(strings.TrimSuffix(name, ".gz"), LogSuffix)
		if !ok || e.IsDir() {
			continue
		}
		got, err := readLog(filepath.Join(dir, name), proc)
		if err != nil {
			return nil, 0, err
		}
		ops = append(ops, got...)
		logs++
	}
	slices.SortStableFunc(ops, func(a, b storelog.Op) int { return cmp.Compare(a.At, b.At) })
	return ops, logs, nil
}

func readLog(path, proc string) ([]storelog.Op, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r = z
	}
	return storelog.Read(r, proc)
}
