package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"syscall"
	"time"
)

// Result is what one fault did to the service, measured by the harness.
type Result struct {
	Fault  string
	Target string
	Node   int64 // the target's node, -1 if it held none
	// NodeFree is from the fault to the target's node being free again
	// in the node store's terms (see Stores); Resumed from then to the
	// next IDs of that node, whoever serves them. Zero when not measured.
	NodeFree time.Duration
	Resumed  time.Duration
	// Back is, for a process killed and started again, from the kill to
	// the first IDs of what replaces it: its new life's, from any free
	// node, or its old node's, served by the process that waited for a
	// node (with the pool full, as in the harness, the restarted process
	// becomes the one that waits). Zero when not measured.
	Back time.Duration
	// Pause is the longest time a process life serving when the fault
	// began, other than the target, went without an answer.
	Pause     time.Duration
	PauseLife string
	// Outage is set when the fault took the whole node store away (a
	// store of one server crashed): every lease lapses, so the
	// survivors' pause is reported, not held to a goal.
	Outage bool
	Err    error
	phase  string // the fault's phase in the history
}

func (r Result) String() string {
	s := fmt.Sprintf("%-18s %-4s node %2d", r.Fault, r.Target, r.Node)
	if r.NodeFree > 0 {
		s += fmt.Sprintf("  node free after %-8s served again %-8s later", r.NodeFree.Round(time.Millisecond), r.Resumed.Round(time.Millisecond))
	}
	if r.Back > 0 {
		s += fmt.Sprintf("  its place served again after %s", r.Back.Round(time.Millisecond))
	}
	s += fmt.Sprintf("  survivors' longest pause %s (%s)", r.Pause.Round(time.Millisecond), r.PauseLife)
	if r.Err != nil {
		s += "  error: " + r.Err.Error()
	}
	return s
}

// Faults injects faults into a cluster under load.
type Faults struct {
	c    *Cluster
	load *Load
}

// NewFaults returns the fault injector of c under load.
func NewFaults(c *Cluster, load *Load) *Faults { return &Faults{c: c, load: load} }

// holder returns the first firn serve process from start that holds a
// node.
func (f *Faults) holder(start int) *Proc {
	for i := range f.c.Procs {
		p := f.c.Procs[(start+i)%len(f.c.Procs)]
		if p.Node() >= 0 {
			return p
		}
	}
	return f.c.Procs[start%len(f.c.Procs)]
}

// begin opens a phase and notes who serves.
func (f *Faults) begin(name string, p *Proc) (Result, map[string]bool, time.Time) {
	live := f.load.Mark(300 * time.Millisecond)
	life, _ := p.Life()
	delete(live, life)
	// A life that has ended (a hand-over just stopped it) is no
	// survivor: its silence is not a pause. Nor is one that holds no
	// node: it waits for one. In the long sites run a holder paused by
	// sigstop-after-hwm logged its lease lost at SIGCONT, yet answered
	// IDs of its old node (below the new holder's, as fencing wants) for
	// one more second, the last 9 ms before the partition began; its wait
	// for a node after that was counted as a survivor's pause of 2.2 s.
	// That wait is the last fault's, not this one's.
	current := map[string]bool{}
	for _, q := range f.c.all() {
		name, _ := q.Life()
		current[name] = q.Node() >= 0
	}
	maps.DeleteFunc(live, func(l string, _ bool) bool { return !current[l] })
	r := Result{Fault: name, Target: p.Name, Node: p.Node(), phase: phaseOf(name, p)}
	return r, live, f.c.Phase(r.phase)
}

// phaseOf names the phase of a fault on p: a fault on an embedding
// process apart from the same fault on firn serve ("kill-9 e0").
func phaseOf(fault string, p *Proc) string {
	if p.Embedded {
		return fault + " " + p.Name
	}
	return fault
}

// end measures the survivors' longest pause and lets the cluster settle.
func (f *Faults) end(r *Result, live map[string]bool) {
	for life, g := range f.load.Gaps() {
		if live[life] && g > r.Pause {
			r.Pause, r.PauseLife = g, life
		}
	}
	f.c.Phase(cmp.Or(r.phase, r.Fault) + " settle")
	time.Sleep(time.Second)
}

// freed reports when node n is free again; never when n < 0 (none).
func (f *Faults) freed(ctx context.Context, n int64) <-chan time.Time {
	if n < 0 {
		return make(chan time.Time)
	}
	return f.c.store.free(ctx, uint64(n))
}

// recovered fills NodeFree and Resumed: the node is free again within
// timeout and is served again after.
func (f *Faults) recovered(r *Result, start time.Time, free <-chan time.Time, timeout time.Duration) {
	if r.Node < 0 {
		return
	}
	select {
	case at := <-free:
		r.NodeFree = at.Sub(start)
		served, err := f.load.WaitServed(uint64(r.Node), at, timeout)
		if err != nil {
			r.Err = err
			return
		}
		r.Resumed = served.Sub(at)
	case <-time.After(timeout):
		r.Err = fmt.Errorf("node %d still held %s after the fault", r.Node, timeout)
	}
}

// Kill9 kills the process holding a node with SIGKILL and starts it again
// at once.
func (f *Faults) Kill9(i int) Result { return f.kill9(f.holder(i)) }

func (f *Faults) kill9(p *Proc) Result {
	r, live, _ := f.begin("kill-9", p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	free := f.freed(ctx, r.Node)
	start := time.Now()
	p.Kill()
	if err := p.Start(); err != nil {
		r.Err = err
	}
	life, _ := p.Life()
	f.recovered(&r, start, free, 3*f.c.cfg.TTL+5*time.Second)
	if r.NodeFree > 0 {
		r.Back = r.NodeFree + r.Resumed
	}
	if at, err := f.load.WaitLife(life, 0); err == nil && (r.Back == 0 || at.Sub(start) < r.Back) {
		r.Back = at.Sub(start)
	}
	f.end(&r, live)
	return r
}

// Pause stops a process holding a node with SIGSTOP past its lease TTL,
// then continues it. With afterHWM the stop lands just after the process
// wrote its HWM, as the node store shows it.
func (f *Faults) Pause(i int, afterHWM bool) Result { return f.pause(f.holder(i), afterHWM) }

func (f *Faults) pause(p *Proc, afterHWM bool) Result {
	name := "sigstop"
	if afterHWM {
		name = "sigstop-after-hwm"
	}
	r, live, _ := f.begin(name, p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if afterHWM && r.Node >= 0 {
		select {
		case <-f.c.store.hwmWritten(ctx, uint64(r.Node)):
		case <-time.After(15 * time.Second):
			r.Err = fmt.Errorf("no HWM write of node %d in 15s", r.Node)
		}
	}
	free := f.freed(ctx, r.Node)
	start := time.Now()
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		r.Err = err
	}
	f.recovered(&r, start, free, 3*f.c.cfg.TTL+5*time.Second)
	time.Sleep(time.Until(start.Add(f.c.cfg.TTL + time.Second)))
	if err := p.Signal(syscall.SIGCONT); err != nil && r.Err == nil {
		r.Err = err
	}
	f.end(&r, live)
	return r
}

// Partition cuts a process holding a node off from the node store past
// its lease TTL, then lets it through again.
func (f *Faults) Partition(i int) Result { return f.partition(f.holder(i)) }

func (f *Faults) partition(p *Proc) Result {
	r, live, _ := f.begin("partition", p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	free := f.freed(ctx, r.Node)
	start := time.Now()
	p.Cut()
	f.recovered(&r, start, free, 3*f.c.cfg.TTL+5*time.Second)
	time.Sleep(time.Until(start.Add(f.c.cfg.TTL + time.Second)))
	p.Restore()
	f.end(&r, live)
	return r
}

// StoreCrash kills the node store with SIGKILL — etcd's leader, the
// whole database server — and starts it again after an election's
// worth of time. The processes must serve again by themselves.
func (f *Faults) StoreCrash() Result {
	r := Result{Fault: "store-crash", Node: -1, Outage: len(f.c.store.upstreams()) == 1}
	live := f.load.Mark(300 * time.Millisecond)
	f.c.Phase(r.Fault)
	r.Target, r.Err = f.c.store.crash(2 * time.Second)
	f.end(&r, live)
	return r
}

// Rolling stops every process in turn with SIGTERM and starts it again.
func (f *Faults) Rolling() Result {
	r := Result{Fault: "rolling-restart", Target: "all", Node: -1}
	f.c.Phase(r.Fault)
	for _, p := range f.c.all() {
		if err := p.Stop(15 * time.Second); err != nil && r.Err == nil {
			r.Err = err
		}
		if err := p.Start(); err != nil && r.Err == nil {
			r.Err = err
		}
		time.Sleep(500 * time.Millisecond)
	}
	f.end(&r, nil)
	return r
}

// Clock restarts a process holding a node on the clock-hook build with its
// wall clock d ahead, and leaves it so: its IDs, and those of whoever
// takes its node later, carry times up to d ahead. The waiting process, if
// any, is stopped meanwhile, so the restarted one takes the node back.
func (f *Faults) Clock(i int, d time.Duration) Result {
	p := f.holder(i)
	r, live, _ := f.begin("clock+"+d.String(), p)
	spare := f.waiting(p)
	p.SetClock(d)
	r.Err = errors.Join(p.Stop(15*time.Second), stop(spare), p.Start(), p.WaitReady(3*f.c.cfg.TTL+5*time.Second))
	if spare != nil {
		r.Err = errors.Join(r.Err, spare.Start())
	}
	f.end(&r, live)
	return r
}

// waiting is a process other than p that holds no node, or nil.
func (f *Faults) waiting(p *Proc) *Proc {
	var w *Proc
	for _, q := range f.c.all() {
		if q != p && q.Node() < 0 {
			w = q
		}
	}
	return w
}

func stop(p *Proc) error {
	if p == nil {
		return nil
	}
	return p.Stop(15 * time.Second)
}

// Embedded runs the faults that hit one process — kill -9, SIGSTOP past
// the lease TTL, a partition from the node store — on each process that
// embeds firn (Cluster.Embedded), each once the process holds a node
// (see hand). The node store's crash hits them with the rest.
func (f *Faults) Embedded() []Result {
	faults := []func(*Proc) Result{f.kill9, func(p *Proc) Result { return f.pause(p, false) }, f.partition}
	var out []Result
	for _, p := range f.c.Embedded {
		for _, fault := range faults {
			if err := f.hand(p); err != nil {
				out = append(out, Result{Fault: "hand-over", Target: p.Name, Node: -1, Err: err})
				continue
			}
			out = append(out, fault(p))
		}
	}
	return out
}

// hand makes p hold a node that serves. With one process more than the
// usable nodes, a process waiting for one is the only one waiting: a firn
// serve process holding a node is stopped (it releases the node, which p
// takes) and started again (it then waits in p's place).
func (f *Faults) hand(p *Proc) error {
	bound := 3*f.c.cfg.TTL + 5*time.Second
	if p.Node() >= 0 {
		return p.WaitReady(bound)
	}
	q := f.holder(0)
	if q.Node() < 0 {
		return fmt.Errorf("%s waits for a node, and no firn serve process holds one to hand over", p.Name)
	}
	f.c.Phase(phaseOf("hand-over", p))
	err := q.Stop(15 * time.Second)
	deadline := time.Now().Add(bound)
	for p.Node() < 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if p.Node() < 0 {
		err = errors.Join(err, fmt.Errorf("%s took no node within %s of %s releasing one", p.Name, bound, q.Name))
	}
	return errors.Join(err, q.Start(), p.WaitReady(bound))
}
