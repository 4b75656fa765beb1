package storelog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Op is one recorded operation: its call and, unless the outcome is
// Unknown for want of an answer, its return.
type Op struct {
	Call
	Ret Return
	// Proc names the log it came from: one process.
	Proc string
}

// Returned reports whether the operation's return was recorded.
func (o Op) Returned() bool { return o.Ret.At != 0 }

// Read reads one process's log. An operation whose return is missing —
// the process was killed while it was in flight — has the outcome
// Unknown and no return time. A last line cut short is ignored: its
// write never completed.
func Read(r io.Reader, proc string) ([]Op, error) {
	var ops []Op
	index := map[uint64]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var probe struct {
			Call   *int64 `json:"call"`
			Return *int64 `json:"return"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			if lastLine(sc) {
				break
			}
			return nil, fmt.Errorf("%s line %d: %w", proc, n, err)
		}
		if err := readLine(line, probe.Call != nil, proc, &ops, index); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", proc, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", proc, err)
	}
	for i := range ops {
		if !ops[i].Returned() {
			ops[i].Ret.Outcome = Unknown
		}
	}
	return ops, nil
}

// readLine adds a call to ops, or a return to its call.
func readLine(line []byte, isCall bool, proc string, ops *[]Op, index map[uint64]int) error {
	if isCall {
		var c Call
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		if _, dup := index[c.Seq]; dup {
			return fmt.Errorf("operation %d called twice", c.Seq)
		}
		index[c.Seq] = len(*ops)
		*ops = append(*ops, Op{Call: c, Proc: proc})
		return nil
	}
	var ret Return
	if err := json.Unmarshal(line, &ret); err != nil {
		return err
	}
	i, ok := index[ret.Seq]
	if !ok || (*ops)[i].Returned() {
		return fmt.Errorf("return of operation %d without its call, or twice", ret.Seq)
	}
	(*ops)[i].Ret = ret
	return nil
}

// lastLine reports whether the scanner has no line after the current one.
func lastLine(sc *bufio.Scanner) bool { return !sc.Scan() }
