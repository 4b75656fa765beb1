package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/test/cluster/history"
)

// Load is the callers driving every process: each caller asks one process
// for batches, one request at a time, and records each in the history.
type Load struct {
	c      *Cluster
	layout snowflake.Layout
	stop   chan struct{}
	wg     sync.WaitGroup
	ids    atomic.Int64
	segErr atomic.Int64   // segment requests a store failed (unavailable, timeout)
	client *client.Client // the Go client of every process, if loaded

	mu sync.Mutex
	// served is, per node, when a request last completed with its IDs.
	served map[uint64]time.Time
	// lastOK and gaps are, per process life, the last success and the
	// longest time between two since Mark.
	lastOK  map[string]time.Time
	firstOK map[string]time.Time
	gaps    map[string]time.Duration
	// segOK is, per process, when a request for segment IDs last
	// succeeded.
	segOK map[string]time.Time
}

// StartLoad starts the callers; Stop ends them.
func (c *Cluster) StartLoad() *Load {
	l := &Load{c: c, layout: c.Layout(), stop: make(chan struct{}), served: map[uint64]time.Time{},
		lastOK: map[string]time.Time{}, firstOK: map[string]time.Time{}, gaps: map[string]time.Duration{}, segOK: map[string]time.Time{}}
	for _, p := range c.all() {
		for i := range c.cfg.Callers {
			l.wg.Add(1)
			go l.caller(fmt.Sprintf("%s.c%d", p.Name, i), p, "")
		}
		if c.cfg.Segments && !p.Embedded {
			l.wg.Add(1)
			go l.caller(p.Name+".seg", p, SegmentTag)
		}
	}
	if c.cfg.ClientCallers > 0 {
		// The firn serve processes: the Go client speaks firn's API,
		// which an embedding application does not serve.
		var eps []string
		for _, p := range c.Procs {
			eps = append(eps, "http://"+p.front.Addr())
		}
		cl, err := client.New(client.Config{Endpoints: eps, HTTP: true, HealthInterval: 200 * time.Millisecond})
		if err != nil {
			c.t.Fatal(err)
		}
		l.client = cl
		for i := range c.cfg.ClientCallers {
			l.wg.Add(1)
			go l.clientCaller(c.named(fmt.Sprintf("client.c%d", i)), cl)
		}
	}
	return l
}

// Stop stops the callers and waits for them.
func (l *Load) Stop() {
	close(l.stop)
	l.wg.Wait()
	if l.client != nil {
		_ = l.client.Close(context.Background()) // its buffered IDs are dropped, never served
	}
}

// clientCalls is how many IDs a client caller takes per call, one at a
// time, and records as one request.
const clientCalls = 100

// clientCaller takes snowflake IDs from the Go client one at a time and
// records each hundred as one buffered request.
func (l *Load) clientCaller(name string, cl *client.Client) {
	defer l.wg.Done()
	ids := make([]int64, 0, clientCalls)
	for {
		select {
		case <-l.stop:
			return
		default:
		}
		ids = ids[:0]
		invoke := time.Now()
		kind := ""
		for range clientCalls {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			id, err := cl.Next(ctx)
			cancel()
			if err != nil {
				var ce *client.Error
				kind = "client"
				if errors.As(err, &ce) && ce.Code != "" {
					kind = ce.Code
				}
				break
			}
			ids = append(ids, id)
		}
		done := time.Now()
		if len(ids) > 0 {
			l.c.Record(history.Record{Kind: history.KindRequest, Caller: name, Buffered: true, Site: l.c.siteName(),
				Invoke: invoke.UnixNano(), Complete: done.UnixNano(), IDs: slices.Clone(ids)})
			l.ids.Add(int64(len(ids)))
		}
		if kind != "" {
			l.c.Record(history.Record{Kind: history.KindRequest, Caller: name, Buffered: true,
				Invoke: invoke.UnixNano(), Complete: done.UnixNano(), Err: kind})
			time.Sleep(20 * time.Millisecond)
			continue
		}
		time.Sleep(l.c.cfg.Pace)
	}
}

// SegmentErrors is how many requests for segment IDs have failed as a
// store that does not answer makes them fail: unavailable or timeout (a
// process waiting for a node, or killed, fails them otherwise).
func (l *Load) SegmentErrors() int64 { return l.segErr.Load() }

// IDs is how many IDs the callers have received.
func (l *Load) IDs() int64 { return l.ids.Load() }

// caller asks p for batches of snowflake IDs, or of tag's IDs.
func (l *Load) caller(name string, p *Proc, tag string) {
	defer l.wg.Done()
	cl := &http.Client{Timeout: time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer cl.CloseIdleConnections()
	for {
		select {
		case <-l.stop:
			return
		default:
		}
		life, addr := p.Life()
		if addr == "" {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		invoke := time.Now()
		ids, kind := l.batch(cl, addr, tag)
		done := time.Now()
		l.c.Record(history.Record{Kind: history.KindRequest, Caller: name, Proc: life, Tag: tag, Site: l.c.siteName(),
			Invoke: invoke.UnixNano(), Complete: done.UnixNano(), IDs: ids, Err: kind})
		if kind != "" {
			if tag != "" && (kind == "unavailable" || kind == "timeout") {
				l.segErr.Add(1)
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if tag != "" {
			// Segment IDs count, but the availability figures are the
			// snowflake callers': a segment buffer serves on while a
			// node is lost.
			l.ids.Add(int64(len(ids)))
			l.mu.Lock()
			l.segOK[p.Name] = done
			l.mu.Unlock()
		} else {
			l.ok(life, ids, done)
		}
		time.Sleep(l.c.cfg.Pace)
	}
}

// ok notes a success for the availability figures.
func (l *Load) ok(life string, ids []int64, at time.Time) {
	l.ids.Add(int64(len(ids)))
	l.mu.Lock()
	defer l.mu.Unlock()
	if parts, err := l.layout.Decompose(uint64(ids[0])); err == nil {
		l.served[parts.Node] = at
	}
	if prev, ok := l.lastOK[life]; ok {
		l.gaps[life] = max(l.gaps[life], at.Sub(prev))
	} else {
		l.firstOK[life] = at
	}
	l.lastOK[life] = at
}

// batch asks addr for a batch; on failure it returns the error's kind:
// the server's code, "timeout" or "transport".
func (l *Load) batch(cl *http.Client, addr, tag string) ([]int64, string) {
	path := "/v1/snowflake/batch"
	if tag != "" {
		path = "/v1/segments/" + tag + "/batch"
	}
	resp, err := cl.Get(fmt.Sprintf("http://%s%s?count=%d&format=number", addr, path, l.c.cfg.Batch))
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, "timeout"
		}
		return nil, "transport"
	}
	defer resp.Body.Close()
	var body struct {
		IDs   []int64 `json:"ids"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, "bad_response"
	}
	if resp.StatusCode != http.StatusOK {
		if body.Error.Code == "" {
			return nil, fmt.Sprintf("http_%d", resp.StatusCode)
		}
		return nil, body.Error.Code
	}
	if len(body.IDs) == 0 {
		return nil, "empty_batch"
	}
	return body.IDs, ""
}

// Mark starts measuring each life's longest pause afresh and returns the
// lives that succeeded within the last window.
func (l *Load) Mark(window time.Duration) map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.gaps)
	live := map[string]bool{}
	for life, at := range l.lastOK {
		if time.Since(at) < window {
			live[life] = true
		}
	}
	return live
}

// Gaps returns each life's longest pause since Mark, counting a pause
// still under way.
func (l *Load) Gaps() map[string]time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]time.Duration, len(l.gaps))
	for k, v := range l.gaps {
		out[k] = v
	}
	for k, at := range l.lastOK {
		out[k] = max(out[k], time.Since(at))
	}
	return out
}

// ServingSegments returns the processes that served segment IDs within
// the last window: a process that holds no node yet serves none.
func (l *Load) ServingSegments(window time.Duration) []*Proc {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*Proc
	for _, p := range l.c.Procs {
		if time.Since(l.segOK[p.Name]) < window {
			out = append(out, p)
		}
	}
	return out
}

// WaitSegments waits until p serves segment IDs again after since.
func (l *Load) WaitSegments(p *Proc, since time.Time, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		at := l.segOK[p.Name]
		l.mu.Unlock()
		if at.After(since) {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("%s served no segment IDs within %s after the database came back", p.Name, timeout)
}

// WaitLife waits until process life answers with IDs, and returns when it
// first did.
func (l *Load) WaitLife(life string, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		l.mu.Lock()
		at, ok := l.firstOK[life]
		l.mu.Unlock()
		if ok {
			return at, nil
		}
		if !time.Now().Before(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("%s served no IDs within %s of its start", life, timeout)
}

// WaitServed waits until a request completes with IDs of node n after
// since, and returns when.
func (l *Load) WaitServed(n uint64, since time.Time, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		at := l.served[n]
		l.mu.Unlock()
		if at.After(since) {
			return at, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("node %d not served within %s", n, timeout)
}
