package legacytest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Snowflake stands in for a Leaf snowflake instance: SnowflakeIDGenImpl
// over SnowflakeZookeeperHolder, followed line by line from
// github.com/Meituan-Dianping/Leaf commit
// 86a6441d263497b9f9ee321de13422b9c63f0c06,
// leaf-core/src/main/java/com/sankuai/inf/leaf/snowflake/ (the line
// numbers below are those files'), workerID.properties fallback included.
type Snowflake struct {
	cfg      SnowflakeConfig
	WorkerID int64
	// FromCache says init failed and the worker ID came from
	// workerID.properties (SnowflakeZookeeperHolder.java:95-106).
	FromCache bool

	conn    *zk.Conn
	node    string // zk_AddressNode
	stop    chan struct{}
	stopped sync.WaitGroup

	mu                  sync.Mutex
	sequence, lastStamp int64
	lastUpdate          int64 // lastUpdateTime, of the heartbeat
}

// SnowflakeConfig is what a Leaf instance is started with.
type SnowflakeConfig struct {
	IP, Port string
	Servers  []string // leaf.zk.list
	Name     string   // leaf.name
	TmpDir   string   // java.io.tmpdir
	// Heartbeat is the upload loop's delay: 3 s in Leaf (line 127); the
	// first upload comes after a third of it (1 s in Leaf).
	Heartbeat time.Duration
}

// leafEpoch is SnowflakeIDGenImpl.java:36's twepoch.
const leafEpoch = 1288834974657

// StartSnowflake is the constructor, SnowflakeIDGenImpl.java:44-58: init
// the holder, then refuse a worker ID outside 0..1023.
func StartSnowflake(cfg SnowflakeConfig) (*Snowflake, error) {
	s := &Snowflake{cfg: cfg, stop: make(chan struct{}), lastStamp: -1}
	if !s.init() {
		return nil, errors.New("leaf: Snowflake Id Gen is not init ok") // line 55
	}
	if s.WorkerID < 0 || s.WorkerID > 1023 { // line 57
		s.Stop()
		return nil, fmt.Errorf("leaf: workerID must gte 0 and lte 1023 (got %d)", s.WorkerID)
	}
	return s, nil
}

func (s *Snowflake) forever() string { return "/snowflake/" + s.cfg.Name + "/forever" } // lines 34, 36
func (s *Snowflake) addr() string    { return s.cfg.IP + ":" + s.cfg.Port }             // line 45

// PropPath is where a Leaf instance caches its worker ID (line 35).
func (cfg SnowflakeConfig) PropPath() string {
	return filepath.Join(cfg.TmpDir, cfg.Name, "leafconf", cfg.Port, "workerID.properties")
}

// init is SnowflakeZookeeperHolder.init, lines 49-108.
func (s *Snowflake) init() bool {
	if err := s.register(); err != nil {
		// Lines 95-106: any exception falls back to the cached file.
		data, rerr := os.ReadFile(s.cfg.PropPath())
		if rerr != nil {
			return false
		}
		id, perr := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(string(data), "workerID=")), 10, 64)
		if perr != nil {
			return false
		}
		s.WorkerID, s.FromCache = id, true
	}
	return true
}

// register is init's try block, lines 51-94.
func (s *Snowflake) register() error {
	conn, err := s.connect() // lines 51-52
	if err != nil {
		return err
	}
	s.conn = conn
	exists, _, err := conn.Exists(s.forever()) // line 53
	if err != nil {
		return err
	}
	if !exists { // lines 54-61: the first instance; workerID stays 0
		if s.node, err = s.createNode(); err != nil {
			return err
		}
		s.updateLocalWorkerID()
		s.scheduleUpload()
		return nil
	}
	keys, _, err := conn.Children(s.forever()) // line 66
	if err != nil {
		return err
	}
	for _, key := range keys { // lines 67-71, 72-83: its own node
		addr, seq, ok := strings.Cut(key, "-")
		n, perr := strconv.Atoi(seq)
		if !ok || perr != nil {
			return fmt.Errorf("child %q: %w", key, errors.Join(perr, errors.New("no sequence")))
		}
		if addr == s.addr() {
			return s.returning(key, n)
		}
	}
	return s.fresh() // lines 84-93
}

// returning is lines 74-83: reuse the node, after the timestamp check.
func (s *Snowflake) returning(key string, id int) error {
	s.node, s.WorkerID = s.forever()+"/"+key, int64(id)
	data, _, err := s.conn.Get(s.node) // checkInitTimeStamp, lines 131-136
	if err != nil {
		return err
	}
	var e struct{ Timestamp int64 }
	if err := jsonUnmarshal(data, &e); err != nil {
		return err
	}
	if e.Timestamp > time.Now().UnixMilli() {
		return errors.New("init timestamp check error,forever node timestamp gt this node time") // line 78
	}
	s.scheduleUpload()
	s.updateLocalWorkerID()
	return nil
}

// fresh is lines 86-92: a new persistent sequential node; its sequence is
// the worker ID.
func (s *Snowflake) fresh() error {
	node, err := s.createNode()
	if err != nil {
		return err
	}
	_, seq, _ := strings.Cut(path.Base(node), "-") // lines 88-89
	id, err := strconv.Atoi(seq)
	if err != nil {
		return err
	}
	s.node, s.WorkerID = node, int64(id)
	s.scheduleUpload()
	s.updateLocalWorkerID()
	return nil
}

// connect opens a session with a connection deadline, as Curator's
// connectionTimeoutMs does (line 51: 10 s; shorter here).
func (s *Snowflake) connect() (*zk.Conn, error) {
	conn, events, err := zk.Connect(s.cfg.Servers, 6*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		return nil, err
	}
	deadline := time.After(2 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return conn, nil
			}
		case <-deadline:
			conn.Close()
			return nil, errors.New("connect: no session")
		}
	}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// createNode is lines 145-152: creatingParentsIfNeeded, then a
// PERSISTENT_SEQUENTIAL node ip:port- holding buildData.
func (s *Snowflake) createNode() (string, error) {
	parts := strings.Split(strings.TrimPrefix(s.forever(), "/"), "/")
	for i := range parts {
		_, err := s.conn.Create("/"+strings.Join(parts[:i+1], "/"), nil, 0, zk.WorldACL(zk.PermAll))
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return "", err
		}
	}
	return s.conn.Create(s.forever()+"/"+s.addr()+"-", s.buildData(), zk.FlagSequence, zk.WorldACL(zk.PermAll))
}

// buildData is lines 171-176.
func (s *Snowflake) buildData() []byte {
	return fmt.Appendf(nil, `{"ip":%q,"port":%q,"timestamp":%d}`, s.cfg.IP, s.cfg.Port, time.Now().UnixMilli())
}

// scheduleUpload is lines 114-129: updateNewData every Heartbeat after
// the last one ended.
func (s *Snowflake) scheduleUpload() {
	s.stopped.Add(1)
	go func() {
		defer s.stopped.Done()
		delay := s.cfg.Heartbeat / 3
		for {
			select {
			case <-s.stop:
				return
			case <-time.After(delay):
			}
			s.updateNewData()
			delay = s.cfg.Heartbeat
		}
	}()
}

// updateNewData is lines 154-164: it compares against its own last
// upload, not ZooKeeper's data, and only logs a failure.
func (s *Snowflake) updateNewData() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Now().UnixMilli() < s.lastUpdate {
		return
	}
	if _, err := s.conn.Set(s.node, s.buildData(), -1); err != nil {
		return
	}
	s.lastUpdate = time.Now().UnixMilli()
}

// updateLocalWorkerID is lines 189-217, quirk included: when the file is
// missing but its directory exists, mkdirs is false and nothing is
// written.
func (s *Snowflake) updateLocalWorkerID() {
	path := s.cfg.PropPath()
	content := []byte("workerID=" + strconv.FormatInt(s.WorkerID, 10))
	if _, err := os.Stat(path); err == nil {
		_ = os.WriteFile(path, content, 0o644)
		return
	}
	if _, err := os.Stat(filepath.Dir(path)); err == nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o755) == nil {
		_ = os.WriteFile(path, content, 0o644)
	}
}

// Next is SnowflakeIDGenImpl.get, lines 61-95.
func (s *Snowflake) Next() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := time.Now().UnixMilli()
	if ts < s.lastStamp {
		offset := s.lastStamp - ts
		if offset > 5 {
			return 0, errors.New("clock moved back") // line 77
		}
		time.Sleep(time.Duration(offset<<1) * time.Millisecond)
		if ts = time.Now().UnixMilli(); ts < s.lastStamp {
			return 0, errors.New("clock moved back") // line 70
		}
	}
	if s.lastStamp == ts {
		s.sequence = (s.sequence + 1) & 4095
		if s.sequence == 0 { // lines 82-86
			s.sequence = int64(rand.IntN(100))
			for ts <= s.lastStamp {
				ts = time.Now().UnixMilli()
			}
		}
	} else {
		s.sequence = int64(rand.IntN(100)) // line 89
	}
	s.lastStamp = ts
	return (ts-leafEpoch)<<22 | s.WorkerID<<12 | s.sequence, nil // line 92
}

// Stop ends the heartbeat and the session, as the JVM's exit does.
func (s *Snowflake) Stop() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.stopped.Wait()
	if s.conn != nil {
		s.conn.Close()
	}
}

// jsonUnmarshal reads a worker znode as Jackson reads an Endpoint
// (deBuildData, lines 178-182).
func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
