package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/firn-id/firn/internal/testseam"
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
	// the Multi that fences forever's sequence; it holds that
	// version as read before the fence, which a re-run reserves by. Leaf
	// reads only forever's children (SnowflakeZookeeperHolder.java:53,66).
	LeafMarker = "firn-takeover"
	// LeafFloorAhead bounds how far past the time of the check a floor may
	// be: a floor further ahead keeps every firn from starting until the
	// clock reaches it (past the layout's end, for ever), and only a
	// worker clock that jumped puts it there. Such a worker is named, and
	// LeafOptions.SkipTimestamps is the way on.
	LeafFloorAhead = time.Minute
)

// leafWait is how long Apply watches the workers' znodes for a live
// instance: two heartbeats plus the margin. No option shortens it; only
// this module's tests can, through internal/testseam.
func leafWait() time.Duration {
	if d := testseam.LeafWatch(); d > 0 {
		return d
	}
	return 2*LeafHeartbeat + LeafSkewMargin
}

// LeafRoot is Leaf's path for leaf.name: "/snowflake/" + name
// (SnowflakeZookeeperHolder.java:34).
func LeafRoot(name string) string { return "/snowflake/" + name }

// LeafTree is what the takeover needs of ZooKeeper (zkstore.Tree): reads
// after a Sync, a write at a version, and a Multi that pushes a znode's
// sequence only from the one read, creating the marker in the same
// transaction (zkstore.Tree.BumpChildren says how Zxids proves it).
type LeafTree interface {
	Children(ctx context.Context, path string) (kids []string, found bool, err error)
	Get(ctx context.Context, path string) (data []byte, version int32, mtime int64, cversion int32, found bool, err error)
	Zxids(ctx context.Context, path string) (created, modified int64, found bool, err error)
	Set(ctx context.Context, path string, data []byte, version int32) error
	BumpChildren(ctx context.Context, parent string, parentData []byte, from int32, n int, marker string, markerData []byte) error
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
	// SkipTimestamps are workers whose last timestamp the floor leaves
	// out: a worker whose clock jumped ahead would otherwise put the floor
	// past the layout's end or far ahead of now (LeafFloorAhead). Their
	// IDs stay reserved, pinned so that firn admin unreserve refuses them:
	// their IDs are not below the floor, so no firn claim may ever take
	// them. Note is the operator's record of why, kept with each pin and
	// required with them.
	SkipTimestamps []uint64
	Note           string
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
	// Sequence is forever's sequence read before any fence (a previous
	// --apply's marker keeps it): the number ZooKeeper gives its next
	// child, the worker ID of the next Leaf instance, every ID given out
	// being below it (zkstore.Tree.Get: not the child version ZooKeeper
	// reports, which counts deletes too). FencedSequence is the
	// version now.
	Sequence, FencedSequence int32
	// Marked says a previous --apply fenced the sequence: its marker
	// was created in the transaction that pushed it (readMarker).
	Marked bool
	// foreverData is forever's data as read, which the fence rewrites
	// unchanged.
	foreverData []byte
	// Reserved are every worker ID below min(Sequence, 1024): every
	// ID Leaf ever gave out, deleted workers' too.
	Reserved []uint64
	// Floor is the Unix ms every firn claim starts at or after, as of
	// the check: the later of the last worker timestamp and now, plus a
	// heartbeat and the skew margin. Apply computes it again.
	Floor int64
	// Skipped are the workers of LeafOptions.SkipTimestamps, whose
	// timestamps the floor leaves out; Note is the operator's record.
	Skipped []uint64
	Note    string
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
	Sequence int32 `json:"sequence"`
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
	if err := p.skip(o.SkipTimestamps, o.Note); err != nil {
		return nil, err
	}
	p.reserve()
	floor, err := p.floorAt(time.Now())
	if err != nil {
		return nil, err
	}
	p.Floor = floor
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
// sequence and a previous --apply's marker.
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
	data, _, _, cv, found, err := tree.Get(ctx, p.forever())
	if err != nil || !found {
		return fmt.Errorf("read %s: %w", p.forever(), err)
	}
	p.Sequence, p.FencedSequence, p.Marked, p.foreverData = cv, cv, false, data
	return p.readMarker(ctx, tree)
}

// readMarker reads a previous --apply's marker. The sequence it
// records replaces forever's own, and so decides which worker IDs are
// reserved: it is trusted only when it provably came from firn's fence,
// since Leaf's tree is world-writable and outlives its own contents. The
// fence creates the marker in the Multi that pushes the sequence past
// 1023, and that Multi runs only from the sequence it records
// and rewrites forever's data (zkstore.Tree.BumpChildren). So a true
// marker sits beside a sequence past 1023, was created in the
// transaction that last wrote forever's data (nothing else writes it:
// Leaf reads only forever's children, SnowflakeZookeeperHolder.java:66),
// and was never rewritten. Anything else is refused, naming the marker.
func (p *LeafPlan) readMarker(ctx context.Context, tree LeafTree) error {
	data, _, _, _, found, err := tree.Get(ctx, p.marker())
	if err != nil || !found {
		return err
	}
	var m leafMarkerValue
	if err := json.Unmarshal(data, &m); err != nil {
		return &RefusedError{fmt.Sprintf("%s holds %q, not the sequence firn's fence recorded; %s", p.marker(), data, p.deleteMarker())}
	}
	if p.FencedSequence < LeafWorkers {
		return &RefusedError{fmt.Sprintf("%s records sequence %d, but %s's sequence (the worker ID ZooKeeper gives next) is %d, below %d: firn writes that "+
			"marker only in the transaction that pushes the sequence past %d, so no fence of firn's is in place on this %s "+
			"(it was recreated since, or the marker was written by hand), and trusting the marker would leave worker IDs Leaf "+
			"gave out unreserved; %s", p.marker(), m.Sequence, p.forever(), p.FencedSequence, LeafWorkers, LeafWorkers-1,
			p.forever(), p.deleteMarker())}
	}
	created, modified, found, err := tree.Zxids(ctx, p.marker())
	if err != nil || !found {
		return fmt.Errorf("read %s: %w (found %t)", p.marker(), err, found)
	}
	_, foreverWritten, _, err := tree.Zxids(ctx, p.forever())
	if err != nil {
		return err
	}
	if created != modified || created != foreverWritten || m.Sequence < 0 {
		return &RefusedError{fmt.Sprintf("%s was not created by the transaction that fenced %s (marker created in zxid %#x, "+
			"rewritten in %#x; %s's data last written in %#x): written by hand, by a firn older than this check, or left from "+
			"an earlier %s, it cannot say which worker IDs Leaf gave out; %s (firn then reserves every worker ID below the "+
			"sequence, %d, that is all %d)", p.marker(), p.forever(), created, modified, p.forever(), foreverWritten, p.forever(),
			p.deleteMarker(), p.FencedSequence, LeafWorkers)}
	}
	p.Sequence, p.Marked = m.Sequence, true
	return nil
}

// deleteMarker is the advice of a refused marker.
func (p *LeafPlan) deleteMarker() string {
	return fmt.Sprintf("make sure no firn migrate --apply of %q runs, delete the marker (zkCli.sh delete %s), and run this "+
		"command again", p.Name, p.marker())
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
	// A timestamp in the fence's range is firn's fence only once firn's
	// marker proves a fence landed: before that it is a Leaf clock that
	// jumped some 30,000 years, to be judged by its raw value.
	if e.Timestamp >= LeafFenceBase && p.Marked {
		w.Timestamp, w.Fenced = e.Timestamp-LeafFenceBase, true
	}
	return w, nil
}

// reserve lists every worker ID below min(Sequence, 1024): ZooKeeper
// numbered every worker ever created below the sequence, deleted ones
// too. A worker listed at or past it is reserved too (none is, when the
// fence ran from the sequence read; kept as a second line).
func (p *LeafPlan) reserve() {
	p.Reserved = nil
	for id := int32(0); id < min(p.Sequence, LeafWorkers); id++ {
		p.Reserved = append(p.Reserved, uint64(id))
	}
	for _, w := range p.Workers {
		if w.ID < LeafWorkers && !slices.Contains(p.Reserved, w.ID) {
			p.Reserved = append(p.Reserved, w.ID)
		}
	}
	slices.Sort(p.Reserved)
}

// skip records the workers whose timestamps the floor leaves out; each
// must be a worker the tree lists, and a note is required.
func (p *LeafPlan) skip(ids []uint64, note string) error {
	p.Skipped, p.Note = nil, strings.TrimSpace(note)
	for _, id := range ids {
		if !slices.ContainsFunc(p.Workers, func(w LeafWorker) bool { return w.ID == id }) {
			return &RefusedError{fmt.Sprintf("--leaf-skip-timestamp %d: %s has no worker %d", id, p.forever(), id)}
		}
		if !slices.Contains(p.Skipped, id) {
			p.Skipped = append(p.Skipped, id)
		}
	}
	if len(p.Skipped) > 0 && p.Note == "" {
		return &RefusedError{"--leaf-skip-timestamp needs --note: the operator's record (who, why, which ticket), kept with each " +
			"skipped worker's reservation"}
	}
	slices.Sort(p.Skipped)
	return nil
}

// floorAt is the floor for a takeover at now: the later of the last
// timestamp of every worker not skipped and now, plus a heartbeat and
// the skew margin. A floor past the layout's end, or more than
// LeafFloorAhead past now, is refused naming the worker that put it
// there: it would keep every firn claim from issuing for that long, or
// for ever (the floor only rises).
func (p *LeafPlan) floorAt(now time.Time) (int64, error) {
	last, by := now.UnixMilli(), -1
	for i, w := range p.Workers {
		if w.Timestamp > last && !slices.Contains(p.Skipped, w.ID) {
			last, by = w.Timestamp, i
		}
	}
	margin := LeafHeartbeat.Milliseconds() + LeafSkewMargin.Milliseconds()
	floor := last + margin
	end := p.Layout.Capacity().Last.Add(p.Layout.Tick).UnixMilli()
	if by < 0 || (floor <= end && floor <= now.Add(LeafFloorAhead).UnixMilli() && last <= math.MaxInt64-margin) {
		return floor, nil
	}
	w := p.Workers[by]
	where := fmt.Sprintf("%s ahead of the time of this check (more than %s)", time.UnixMilli(last).Sub(now).Round(time.Second), LeafFloorAhead)
	if floor > end || last > math.MaxInt64-margin {
		where = fmt.Sprintf("past the end of Leaf's layout (%s)", time.UnixMilli(end).UTC().Format(timeFormat))
	}
	return 0, &RefusedError{fmt.Sprintf("Leaf worker %d (%s) has last timestamp %d, %s: a floor above it would keep every firn "+
		"claim from issuing until then; its clock jumped. Its worker ID is reserved whatever its timestamp, so the floor can "+
		"leave it out: run this command again with --leaf-skip-timestamp %d --note TEXT (who, why, which ticket); the worker "+
		"stays reserved for good, firn admin unreserve refuses it", w.ID, w.Addr, w.Timestamp, where, w.ID)}
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
		s.Verdict = fmt.Sprintf("decodes to worker %d, which ZooKeeper never gave out (sequence %d): another layout?", parts.Node, p.Sequence)
	}
	return s
}
