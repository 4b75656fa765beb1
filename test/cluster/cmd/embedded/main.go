// Command embedded is the fault harness's application that embeds firn
// through package ids, as a service would: it opens its source with
// ids.Open on the harness's node store and hands the IDs it draws to the
// harness's load over a tiny HTTP endpoint shaped as firn serve's, so
// that the harness records and checks them as it does firn serve's:
//
//	GET /v1/snowflake/batch?count=N  {"ids": [...]} or {"error": {"code": "not_ready"}}
//	GET /readyz                      200 while the source holds a node that serves
//
// It takes firn serve's store and layout flags (--store, --endpoints or
// --dsn, --namespace, --lease-ttl, --dial-timeout, --node-bits,
// --reserved-nodes) and
// logs as firn serve does (JSON lines "serving" and, from package node,
// "serving again" and "lease lost: acquiring a node again", each with
// its node), which is how the harness learns who holds which node.
//
// Built with the firn_clockhook tag and run with FIRN_TEST_STORE_LOG, it
// records every node-store operation to that file (package storelog), as
// firn serve's test build does, for the harness's linearizability check.
// SIGTERM closes the source, releasing its node, and exits 0.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/firn-id/firn/etcdstore"
	"github.com/firn-id/firn/ids"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
	_ "github.com/firn-id/firn/sqlstore/mysql"
	_ "github.com/firn-id/firn/sqlstore/postgres"
	"github.com/firn-id/firn/store"
	_ "github.com/firn-id/firn/zkstore"
)

// maxBatch bounds a batch request, as firn serve's --max-batch.
const maxBatch = 100_000

// callWait bounds how long a request waits for a node: below the load's
// client timeout (1 s), so a process without a node answers not_ready
// rather than time out.
const callWait = 500 * time.Millisecond

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(1)
	}
}

func run() error {
	kind := flag.String("store", "", "node store kind: etcd, postgres, mysql or zookeeper")
	endpoints := flag.String("endpoints", "", "etcd or ZooKeeper endpoints, comma-separated")
	dsn := flag.String("dsn", "", "database DSN")
	namespace := flag.String("namespace", "", "namespace of the node pool")
	addr := flag.String("http", "127.0.0.1:0", "HTTP address")
	ttl := flag.Duration("lease-ttl", 0, "lease TTL (ids.Options.TTL)")
	dial := flag.Duration("dial-timeout", 0, "bound on the first connection to the store (ids.Options.DialTimeout)")
	nodeBits := flag.Int("node-bits", 10, "node bits of firn's default layout")
	reserved := flag.String("reserved-nodes", "", "node IDs never claimed, comma-separated")
	kinds := flag.Bool("kinds", false, "print the store kinds it can open, one a line, and exit")
	flag.Parse()
	if *kinds {
		for _, k := range store.Kinds() {
			fmt.Println(k.Name)
		}
		return nil
	}

	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	res, err := parseNodes(*reserved)
	if err != nil {
		return err
	}
	wrapped, err := harnessKind(*kind, res)
	if err != nil {
		return err
	}
	l := snowflake.DefaultLayout()
	l.Name, l.Node = "custom", []snowflake.Field{{Name: "node", Bits: *nodeBits}} // as firn serve --node-bits names it
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	src, err := ids.Open(ctx, wrapped, cmp.Or(*endpoints, *dsn), ids.Options{Namespace: *namespace, Layout: l, TTL: *ttl, DialTimeout: *dial, Log: log})
	if err != nil {
		return err
	}
	go announce(ctx, src, log)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/snowflake/batch", func(w http.ResponseWriter, r *http.Request) { batch(w, r, src) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := src.Ready(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		}
	})
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe() }()
	select {
	case err := <-served:
		return errors.Join(err, src.Close(context.Background()))
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(srv.Shutdown(sctx), src.Close(sctx))
}

// announce logs "serving" with the first node the source holds, as firn
// serve does once it holds one: the harness records it as the life's
// acquisition of the node. Later nodes are logged by package node
// ("serving again").
func announce(ctx context.Context, src *ids.Source, log *slog.Logger) {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		if n, ok := src.Node(); ok {
			log.Info("serving", "node", n)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// batch draws count IDs: all of them, or those drawn before the source
// stopped serving and the request's wait ran out. Every ID drawn is
// answered, so the harness checks each one the source issued.
func batch(w http.ResponseWriter, r *http.Request, src *ids.Source) {
	n, err := strconv.Atoi(r.URL.Query().Get("count"))
	if err != nil || n < 1 || n > maxBatch {
		reply(w, http.StatusBadRequest, "bad_request", nil)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callWait)
	defer cancel()
	out := make([]int64, n)
	got := 0
	for got < n {
		k, err := src.NextN(ctx, out[got:])
		got += k
		if err == nil {
			continue
		}
		if got == 0 {
			status, code := classify(err)
			reply(w, status, code, err)
			return
		}
		break
	}
	reply(w, http.StatusOK, "", out[:got])
}

// classify maps a Source's error to firn serve's status and code:
// not_ready while no node serves, unavailable once closing. Anything
// else is a code the harness does not allow, and fails the run.
func classify(err error) (int, string) {
	var failed *ids.FailedError
	switch {
	case errors.Is(err, ids.ErrNotReady):
		return http.StatusServiceUnavailable, "not_ready"
	case errors.Is(err, ids.ErrClosed):
		return http.StatusServiceUnavailable, "unavailable"
	case errors.As(err, &failed):
		return http.StatusInternalServerError, "failed"
	}
	return http.StatusInternalServerError, "internal"
}

// reply writes {"ids": v} or, with a code, {"error": {"code", "message"}}.
func reply(w http.ResponseWriter, status int, code string, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var body any = map[string]any{"ids": v}
	if code != "" {
		msg := ""
		if err, ok := v.(error); ok {
			msg = err.Error()
		}
		body = map[string]any{"error": map[string]string{"code": code, "message": msg}}
	}
	_ = json.NewEncoder(w).Encode(body)
}

func parseNodes(s string) ([]uint64, error) {
	var out []uint64
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' }) {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("--reserved-nodes %q: %w", s, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// harnessKind registers, and returns the name of, a store kind that
// opens kind as it is and adapts its node store for the harness:
// recorded (storelog_on.go) and, with reserved nodes, never claiming
// those. ids.Open then opens it as it opens any registered kind — the
// background dial and its retries included.
//
// reserved stands in for firn serve's --reserved-nodes, which the
// harness's layout uses (one node fewer than the pool, so one process
// always waits) and which ids.Options does not offer: the claim carries
// it, as nodeid.Config.Reserved would put it there.
func harnessKind(kind string, reserved []uint64) (string, error) {
	k, ok := store.Lookup(kind)
	if !ok {
		return "", fmt.Errorf("--store %q: want %s", kind, store.Names(nil))
	}
	w := k
	w.Name, w.Default = "harness-"+kind, false
	w.Check = func(s store.Settings) error {
		s.Store = kind
		return k.Check(s)
	}
	w.Open = func(ctx context.Context, s store.Settings) (*store.Conn, error) {
		s.Store = kind
		c, err := k.Open(ctx, s)
		if err != nil {
			return nil, err
		}
		var nodes nodeid.Store = reserving{Store: c.Nodes, reserved: reserved}
		if c.Nodes, err = recordNodes(nodes); err != nil {
			return nil, errors.Join(err, c.Close())
		}
		return c, nil
	}
	store.Register(w)
	return w.Name, nil
}

// reserving adds its reserved nodes to every claim of any node.
type reserving struct {
	nodeid.Store
	reserved []uint64
}

func (r reserving) Claim(ctx context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	if req.AnyNode {
		req.Reserved = append(append([]uint64(nil), req.Reserved...), r.reserved...)
	}
	return r.Store.Claim(ctx, req)
}
