package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/firn-id/firn/snowflake"
)

// LeafZooKeeper is Meituan Leaf's snowflake mode with its workers in
// ZooKeeper (SnowflakeZookeeperHolder). Every rule of its takeover is
// here, read from github.com/Meituan-Dianping/Leaf at commit
// 86a6441d263497b9f9ee321de13422b9c63f0c06, files under
// leaf-core/src/main/java/com/sankuai/inf/leaf/snowflake/.
const LeafZooKeeper System = "leaf-zookeeper"

const (
	// LeafHeartbeat is how often a Leaf worker rewrites its znode:
	// scheduleWithFixedDelay(…, 1L, 3L, TimeUnit.SECONDS),
	// SnowflakeZookeeperHolder.java:122-127.
	LeafHeartbeat = 3 * time.Second
	// LeafSkewMargin is added to the floor beyond one heartbeat: the
	// heartbeat's fixed delay runs after the previous write returned
	// (SnowflakeZookeeperHolder.java:122), so a worker may issue a little
	// past a heartbeat after its last timestamp; and the Leaf hosts' clocks
	// and the one of the host running --apply differ by this much at most.
	LeafSkewMargin = 2 * time.Second
	// LeafWorkers is how many worker IDs Leaf serves: 10 worker bits
	// (SnowflakeIDGenImpl.java:23-24), and its constructor refuses a
	// worker ID outside 0..1023 (SnowflakeIDGenImpl.java:57).
	LeafWorkers = 1024
	// LeafFenceBase marks a worker timestamp --apply wrote: it writes
	// LeafFenceBase plus the timestamp it found (Unix ms), a date some
	// 30,000 years ahead that no clock reaches, so a restarted Leaf
	// instance fails its start check (SnowflakeZookeeperHolder.java:
	// 131-136) while the original time stays readable for a re-run.
	LeafFenceBase int64 = 1_000_000_000_000_000
	// LeafMarker is the child of /snowflake/{leaf.name} --apply creates in
	// the Multi that fences forever's child version; it holds that child
	// version as read before the fence, which a re-run reserves by. Leaf
	// reads only forever's children (SnowflakeZookeeperHolder.java:53,66).
	LeafMarker = "firn-takeover"
)

// leafWait is how long Apply watches the workers' znodes for a live
// instance: two heartbeats plus the margin. A variable only so tests of
// this package can shorten it; no option sets it.
var leafWait = 2*LeafHeartbeat + LeafSkewMargin

// LeafRoot is Leaf's path for leaf.name: "/snowflake/" + name
// (SnowflakeZookeeperHolder.java:34).
func LeafRoot(name string) string { return "/snowflake/" + name }

// LeafTree is what the takeover needs of ZooKeeper (zkstore.Tree): reads
// after a Sync, a write at a version, and a Multi that pushes a znode's
// child version.
type LeafTree interface {
	Children(ctx context.Context, path string) (kids []string, found bool, err error)
	Get(ctx context.Context, path string) (data []byte, version int32, mtime int64, cversion int32, found bool, err error)
	Set(ctx context.Context, path string, data []byte, version int32) error
	BumpChildren(ctx context.Context, parent string, n int, marker string, markerData []byte) error
}

// LeafOptions says which Leaf fleet CheckLeaf reads.
type LeafOptions struct {
	// Tree is the fleet's ZooKeeper (leaf.zk.list); Servers names it in
	// messages.
	Tree    LeafTree
	Servers string
	// Name is leaf.name.
	Name string
	// Samples are IDs the fleet issued, checked against Leaf's layout.
	Samples []uint64
}

// LeafWorker is one worker znode under forever.
type LeafWorker struct {
	// Znode is its name, ip:port-sequence; Addr the ip:port part.
	Znode, Addr string
	// ID is its worker ID: the sequence ZooKeeper appended, the child
	// version of forever at its creation (SnowflakeZookeeperHolder.java:
	// 86-89). An ID past 1023 is one Leaf's constructor refused.
	ID uint64
	// Timestamp is its last heartbeat (Unix ms), the one found before any
	// fence; Fenced says the znode now holds --apply's fence.
	Timestamp int64
	Fenced    bool
	// Version and MTime are the znode's data version and modification
	// time as read.
	Version int32
	MTime   int64
}

// LeafPlan is what CheckLeaf found under /snowflake/{leaf.name} and what
// firn will do from it.
type LeafPlan struct {
	Name, Root, Servers string
	// Workers are forever's children, by worker ID.
	Workers []LeafWorker
	// ChildVersion is forever's child version read before any fence (a
	// previous --apply's marker keeps it); FencedVersion is the child
	// version now.
	ChildVersion, FencedVersion int32
	// Marked says a previous --apply fenced the child version.
	Marked bool
	// Reserved are every worker ID below min(ChildVersion, 1024): every
	// ID Leaf ever gave out, deleted workers' too.
	Reserved []uint64
	// Floor is the Unix ms every firn claim starts at or after, as of
	// the check: the later of the last worker timestamp and now, plus a
	// heartbeat and the skew margin. Apply computes it again.
	Floor int64
	// Layout is Leaf's (the twitter preset); Samples are the IDs given,
	// decoded with it.
	Layout  snowflake.Layout
	Samples []Sample
	// Unknown lists what the plan could not determine; Applied what
	// Apply wrote, one sentence each.
	Unknown, Applied []string
}

func (p *LeafPlan) forever() string { return p.Root + "/forever" }
func (p *LeafPlan) marker() string  { return p.Root + "/" + LeafMarker }

// leafMarkerValue is the marker's JSON.
type leafMarkerValue struct {
	ChildVersion int32 `json:"childVersion"`
}

// CheckLeaf reads /snowflake/{o.Name} and works out the takeover. It
// writes nothing. It refuses (*RefusedError) a tree with no forever child
// or with another child (RecyclableZookeeperHolder keeps its workers under
// recycle/, a scheme firn does not take over).
func CheckLeaf(ctx context.Context, o LeafOptions) (*LeafPlan, error) {
	if o.Name == "" || strings.Contains(o.Name, "/") {
		return nil, &RefusedError{fmt.Sprintf("--leaf-name %q: want Leaf's leaf.name, one path element", o.Name)}
	}
	// Leaf's epoch and bits are the twitter preset's: 1288834974657,
	// 41/10/12 (SnowflakeIDGenImpl.java:23-27, 36).
	layout, _ := snowflake.Preset(Leaf.Layout())
	p := &LeafPlan{Name: o.Name, Root: LeafRoot(o.Name), Servers: o.Servers, Layout: layout}
	if err := p.readRoot(ctx, o.Tree); err != nil {
		return nil, err
	}
	if err := p.readWorkers(ctx, o.Tree); err != nil {
		return nil, err
	}
	p.reserve()
	p.Floor = p.floorAt(time.Now())
	for _, id := range o.Samples {
		p.Samples = append(p.Samples, p.sample(id))
	}
	p.Unknown = leafUnknown
	return p, nil
}

// leafUnknown is what no read of ZooKeeper can tell.
var leafUnknown = []string{
	"whether a Leaf instance still runs with ZooKeeper out of reach: Leaf keeps issuing when its heartbeat fails, which it " +
		"only logs (SnowflakeZookeeperHolder.java:154-163), so a stale timestamp does not prove a worker stopped; its worker ID " +
		"stays reserved",
	"the workerID.properties files on Leaf's hosts (java.io.tmpdir/{leaf.name}/leafconf/{port}/, SnowflakeZookeeperHolder.java:35): " +
		"any start error falls back to that file and carries on with its worker ID (lines 95-106), past every fence firn " +
		"writes; delete it on every Leaf host",
}

// readRoot refuses a tree firn does not take over, and reads forever's
// child version and a previous --apply's marker.
func (p *LeafPlan) readRoot(ctx context.Context, tree LeafTree) error {
	kids, found, err := tree.Children(ctx, p.Root)
	if err != nil {
		return err
	}
	if !found || !slices.Contains(kids, "forever") {
		return &RefusedError{fmt.Sprintf("ZooKeeper %s has no %s: not a Leaf snowflake fleet named %q (SnowflakeZookeeperHolder keeps "+
			"its workers there; a fleet whose first instance never started has no workers to take over)", p.Servers, p.forever(), p.Name)}
	}
	for _, k := range kids {
		if k != "forever" && k != LeafMarker {
			return &RefusedError{fmt.Sprintf("%s holds %q beside forever: another worker holder (RecyclableZookeeperHolder keeps "+
				"its workers under recycle/, Leaf commit efbc1c06); firn takes over SnowflakeZookeeperHolder's forever layout only", p.Root, k)}
		}
	}
	_, _, _, cv, found, err := tree.Get(ctx, p.forever())
	if err != nil || !found {
		return fmt.Errorf("read %s: %w", p.forever(), err)
	}
	p.ChildVersion, p.FencedVersion = cv, cv
	return p.readMarker(ctx, tree)
}

func (p *LeafPlan) readMarker(ctx context.Context, tree LeafTree) error {
	data, _, _, _, found, err := tree.Get(ctx, p.marker())
	if err != nil || !found {
		return err
	}
	var m leafMarkerValue
	if err := json.Unmarshal(data, &m); err != nil {
		return &RefusedError{fmt.Sprintf("%s holds %q, not the child version firn's fence recorded", p.marker(), data)}
	}
	p.ChildVersion, p.Marked = m.ChildVersion, true
	return nil
}

// leafEndpoint is a worker znode's data, Leaf's Endpoint as Jackson writes
// it (SnowflakeZookeeperHolder.java:171-176, 230-233).
type leafEndpoint struct {
	IP        string `json:"ip"`
	Port      string `json:"port"`
	Timestamp int64  `json:"timestamp"`
}

// readWorkers reads forever's children. Leaf splits a child's name at "-"
// into ip:port and the worker ID (SnowflakeZookeeperHolder.java:67-71).
func (p *LeafPlan) readWorkers(ctx context.Context, tree LeafTree) error {
	kids, _, err := tree.Children(ctx, p.forever())
	if err != nil {
		return err
	}
	workers := make([]LeafWorker, 0, len(kids))
	for _, k := range kids {
		w, err := p.readWorker(ctx, tree, k)
		if err != nil {
			return err
		}
		workers = append(workers, w)
	}
	slices.SortFunc(workers, func(a, b LeafWorker) int { return int(a.ID) - int(b.ID) })
	p.Workers = workers
	return nil
}

func (p *LeafPlan) readWorker(ctx context.Context, tree LeafTree, k string) (LeafWorker, error) {
	addr, seq, ok := strings.Cut(k, "-")
	id, err := strconv.ParseUint(seq, 10, 32)
	if !ok || err != nil {
		return LeafWorker{}, &RefusedError{fmt.Sprintf("%s/%s is not a Leaf worker (ip:port-sequence)", p.forever(), k)}
	}
	data, version, mtime, _, found, err := tree.Get(ctx, p.forever()+"/"+k)
	if err != nil || !found {
		return LeafWorker{}, fmt.Errorf("read %s/%s: %w (found %t)", p.forever(), k, err, found)
	}
	var e leafEndpoint
	if err := json.Unmarshal(data, &e); err != nil {
		return LeafWorker{}, &RefusedError{fmt.Sprintf("%s/%s holds %q, not Leaf's {ip, port, timestamp}", p.forever(), k, data)}
	}
	w := LeafWorker{Znode: k, Addr: addr, ID: id, Timestamp: e.Timestamp, Version: version, MTime: mtime}
	if e.Timestamp >= LeafFenceBase {
		w.Timestamp, w.Fenced = e.Timestamp-LeafFenceBase, true
	}
	return w, nil
}

// reserve lists every worker ID below min(ChildVersion, 1024): ZooKeeper
// numbered every worker ever created below the child version, deleted
// ones too. A worker listed at or past the child version (one created
// between the read of the child version and the fence) is reserved too.
func (p *LeafPlan) reserve() {
	p.Reserved = nil
	for id := int32(0); id < min(p.ChildVersion, LeafWorkers); id++ {
		p.Reserved = append(p.Reserved, uint64(id))
	}
	for _, w := range p.Workers {
		if w.ID < LeafWorkers && !slices.Contains(p.Reserved, w.ID) {
			p.Reserved = append(p.Reserved, w.ID)
		}
	}
	slices.Sort(p.Reserved)
}

// floorAt is the floor for a takeover at now: the later of the last
// worker timestamp and now, plus a heartbeat and the skew margin.
func (p *LeafPlan) floorAt(now time.Time) int64 {
	last := now.UnixMilli()
	for _, w := range p.Workers {
		last = max(last, w.Timestamp)
	}
	return last + LeafHeartbeat.Milliseconds() + LeafSkewMargin.Milliseconds()
}

// sample decodes id with Leaf's layout and judges it: a time after the
// epoch, at most a day ahead, and a worker ID Leaf gave out.
func (p *LeafPlan) sample(id uint64) Sample {
	s := Sample{What: "--sample-id", ID: id}
	parts, err := p.Layout.Decompose(id)
	s.Parts = parts
	switch {
	case err != nil:
		s.Verdict = fmt.Sprintf("does not fit the %d-bit layout %s: another layout?", p.Layout.Bits(), p.Layout.Name)
	case parts.Time.After(time.Now().Add(24 * time.Hour)):
		s.Verdict = fmt.Sprintf("decodes to %s, over a day ahead of now: another layout or epoch?", parts.Time.Format(timeFormat))
	case !slices.Contains(p.Reserved, parts.Node):
		s.Verdict = fmt.Sprintf("decodes to worker %d, which ZooKeeper never gave out (child version %d): another layout?", parts.Node, p.ChildVersion)
	}
	return s
}
