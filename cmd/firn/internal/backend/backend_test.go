package backend_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the binary registers it; so does this test

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/store"
)

func options(r config.Registry, sg config.Segments) backend.Options {
	if r.DialTimeout == 0 {
		r.DialTimeout = 5 * time.Second
	}
	if sg.Format == "" {
		sg.Format = "leaf"
	}
	// The node directory every data directory shares is the test's own,
	// under its data directory.
	return backend.Options{Registry: r, Segments: sg, StateHome: r.DataDir}
}

func ExampleNames() {
	fmt.Println(backend.Names())
	// Output: local, etcd, postgres, mysql or zookeeper
}

// TestBadSettingsMatchErrConfig: every setting that opens no store is bad
// input (ErrConfig), with the message the operator reads and no
// password, before anything is dialed; Check, which does no I/O, refuses
// each with the same message (but a data directory that must exist,
// which only opening looks for).
func TestBadSettingsMatchErrConfig(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		r       config.Registry
		sg      config.Segments
		must    bool
		wantErr string
	}{
		{name: "unknown store", r: config.Registry{Store: "zk"}, wantErr: `--store "zk": want local, etcd, postgres, mysql or zookeeper`},
		{name: "relative data directory", r: config.Registry{Store: "local", DataDir: "state"}, wantErr: `data directory (--data-dir, FIRN_REGISTRY_DATA_DIR or registry.data_dir) "state" is relative`},
		{name: "data directory beside etcd", r: config.Registry{Store: "etcd", DataDir: dir, Endpoints: []string{"127.0.0.1:2379"}}, wantErr: "only the local store keeps a data directory"},
		{name: "local with a DSN", r: config.Registry{Store: "local", DataDir: dir, DSN: "u@tcp(h:3306)/db"}, wantErr: "--dsn is for --store postgres or mysql"},
		{name: "local that must exist", r: config.Registry{Store: "local", DataDir: filepath.Join(dir, "none")}, must: true, wantErr: "nothing to advance there"},
		{name: "etcd without endpoints", r: config.Registry{Store: "etcd"}, wantErr: "--store etcd needs --endpoints"},
		{name: "etcd port", r: config.Registry{Store: "etcd", Endpoints: []string{"http://127.0.0.1:x"}}, wantErr: "--endpoints http://127.0.0.1:x: want"},
		{name: "etcd scheme", r: config.Registry{Store: "etcd", Endpoints: []string{"ftp://127.0.0.1:2379"}}, wantErr: "want http://host:port"},
		{name: "etcd no port", r: config.Registry{Store: "etcd", Endpoints: []string{"127.0.0.1"}}, wantErr: "want host:port"},
		{name: "etcd password in endpoint", r: config.Registry{Store: "etcd", Endpoints: []string{"http://u:s3cretpw@127.0.0.1:x"}}, wantErr: "want"},
		{name: "etcd unclean namespace", r: config.Registry{Store: "etcd", Endpoints: []string{"127.0.0.1:2379"}, Namespace: "/a//b/"}, wantErr: `an etcd namespace is a clean key prefix starting with /, such as "/a/b/"`},
		{name: "postgres without DSN", r: config.Registry{Store: "postgres"}, wantErr: "--store postgres needs --dsn"},
		{name: "postgres URL", r: config.Registry{Store: "postgres", DSN: "postgres://u:s3cretpw@h:xx/db"}, wantErr: "not a PostgreSQL DSN"},
		{name: "postgres unterminated quote", r: config.Registry{Store: "postgres", DSN: "host=db password='s3cret pw port=1"}, wantErr: "not a PostgreSQL DSN"},
		{name: "mysql no slash", r: config.Registry{Store: "mysql", DSN: "u:s3cretpw@tcp(h:3306)"}, wantErr: "not a MySQL DSN"},
		{name: "dial timeout", r: config.Registry{Store: "mysql", DSN: "u@tcp(h:3306)/db", DialTimeout: -1}, wantErr: "--dial-timeout -1ns: want a duration above 0"},
		{name: "segment format", r: config.Registry{Store: "mysql", DSN: "u@tcp(h:3306)/db"}, sg: config.Segments{Format: "snowflake"}, wantErr: `--segments "snowflake": want leaf, tinyid or set`},
		{name: "segment store etcd", r: config.Registry{Store: "local", DataDir: dir}, sg: config.Segments{Store: "etcd", DSN: "x"}, wantErr: `--segment-store "etcd": want postgres or mysql`},
		{name: "segment store without DSN", r: config.Registry{Store: "local", DataDir: dir}, sg: config.Segments{Store: "mysql"}, wantErr: "--segment-store mysql needs --segment-dsn"},
		{name: "a set of Leaf tables", r: config.Registry{Store: "local", DataDir: dir},
			sg: config.Segments{Stores: []config.SegmentStore{{Store: "mysql", DSN: "u@tcp(h:1)/a"}, {Store: "mysql", DSN: "u@tcp(h:2)/b"}}}, wantErr: "with segments.stores: want tinyid or set"},
		{name: "postgres port out of range", r: config.Registry{Store: "postgres", DSN: "postgres://app:s3cretpw@db:99999/ids"}, wantErr: "--dsn postgres://app:REDACTED@db:99999/ids: not a PostgreSQL DSN"},
		{name: "mysql address unterminated", r: config.Registry{Store: "mysql", DSN: "root:s3cretpw@tcp(127.0.0.1:1/leaf"}, wantErr: "--dsn REDACTED: not a MySQL DSN"},
		{name: "segment DSN", r: config.Registry{Store: "local", DataDir: dir}, sg: config.Segments{Store: "postgres", DSN: "postgres://u:s3cretpw@h:1:2/db"}, wantErr: "not a PostgreSQL DSN"},
		{name: "a set store's DSN", r: config.Registry{Store: "local", DataDir: dir},
			sg: config.Segments{Format: "set", Stores: []config.SegmentStore{{Store: "mysql", DSN: "u@tcp(h:1)/a"}, {Store: "mysql", DSN: "u:s3cretpw@tcp(h:2/b"}}}, wantErr: "segments.stores[1]: dsn REDACTED: not a MySQL DSN"},
		{name: "node table", r: config.Registry{Store: "mysql", DSN: "u@tcp(h:3306)/db", Table: "Nodes"}, wantErr: `table name "Nodes"`},
		{name: "segment table", r: config.Registry{Store: "postgres", DSN: "postgres://u@h:1/db"}, sg: config.Segments{Table: "leaf-alloc"}, wantErr: `--segment-table: sqlstore: table name "leaf-alloc"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options(tt.r, tt.sg)
			o.MustExist = tt.must
			stores, err := o.Open(context.Background())
			if err == nil {
				stores.Close()
				t.Fatalf("Open: no error; want one with %q", tt.wantErr)
			}
			if !errors.Is(err, backend.ErrConfig) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Open: %v; want ErrConfig with %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), " pw ") {
				t.Fatalf("Open: %q shows (part of) the password", err)
			}
			if tt.must {
				return
			}
			if cerr := o.Check(); !errors.Is(cerr, backend.ErrConfig) || cerr.Error() != err.Error() {
				t.Fatalf("Check: %v; want Open's %q", cerr, err)
			}
		})
	}
}

// TestCheckPassesWhatOpenDials: Check refuses no setting that is only
// unreachable, for it dials nothing.
func TestCheckPassesWhatOpenDials(t *testing.T) {
	for _, o := range []backend.Options{
		options(config.Registry{Store: "postgres", DSN: "postgres://app:pw@" + closedPort(t) + "/ids"}, config.Segments{}),
		options(config.Registry{Store: "mysql", DSN: "root:pw@tcp(" + closedPort(t) + ")/leaf"}, config.Segments{Format: "tinyid"}),
		options(config.Registry{Store: "etcd", Endpoints: []string{"http://" + closedPort(t)}}, config.Segments{}),
		options(config.Registry{Store: "local", DataDir: t.TempDir()},
			config.Segments{Format: "set", Stores: []config.SegmentStore{{Store: "mysql", DSN: "u@tcp(h:1)/a"}, {Store: "postgres", DSN: "host=h port=2 dbname=b"}}}),
	} {
		if err := o.Check(); err != nil {
			t.Errorf("Check of %s: %v", o.Describe(), err)
		}
	}
}

// closedPort returns an address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestUnreachableIsAnOutage: a store that does not answer is an
// *UnreachableError naming the store and its address, not bad input.
func TestUnreachableIsAnOutage(t *testing.T) {
	for _, kind := range []string{"etcd", "postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			addr := closedPort(t)
			r := config.Registry{Store: kind, DialTimeout: 500 * time.Millisecond}
			switch kind {
			case "etcd":
				r.Endpoints = []string{"http://" + addr}
			case "postgres":
				r.DSN = "postgres://firn:s3cretpw@" + addr + "/db?sslmode=disable"
			default:
				r.DSN = "firn:s3cretpw@tcp(" + addr + ")/db"
			}
			_, _, err := options(r, config.Segments{}).OpenNodes(context.Background())
			var ue *backend.UnreachableError
			if !errors.As(err, &ue) || errors.Is(err, backend.ErrConfig) {
				t.Fatalf("OpenNodes: %v; want an *UnreachableError", err)
			}
			if ue.Store != kind || !strings.Contains(ue.Endpoint, addr) || !strings.HasPrefix(err.Error(), kind+" ") || strings.Contains(err.Error(), "s3cretpw") {
				t.Fatalf("OpenNodes: %q (store %q, endpoint %q); want %s and %s named, no password", err, ue.Store, ue.Endpoint, kind, addr)
			}
			if !strings.Contains(err.Error(), "no answer within 500ms (--dial-timeout)") && !strings.Contains(err.Error(), "unreachable: ") {
				t.Fatalf("OpenNodes: %q; want the dial timeout or the cause", err)
			}
		})
	}
}

// TestUnreadableDSNHiddenWhole: a DSN its driver cannot read is hidden
// whole rather than print a password.
func TestUnreadableDSNHiddenWhole(t *testing.T) {
	o := backend.Options{Registry: config.Registry{Store: "mysql", DSN: "u:s3cretpw@tcp(h:3306)", DialTimeout: time.Second}, Segments: config.Segments{Format: "leaf"}}
	_, _, err := o.OpenNodes(context.Background())
	if !errors.Is(err, backend.ErrConfig) || !strings.HasPrefix(err.Error(), "--dsn REDACTED: not a MySQL DSN") || strings.Contains(err.Error(), "s3cretpw") {
		t.Fatalf("OpenNodes: %v; want ErrConfig with the DSN hidden whole", err)
	}
}

func TestOpenLocal(t *testing.T) {
	dir := t.TempDir()
	o := options(config.Registry{Store: "local", DataDir: dir}, config.Segments{})
	o.MustExist = true
	stores, err := o.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if stores.Nodes == nil || stores.Segments == nil || stores.Tokens != nil {
		t.Errorf("Open: nodes %v, segments %v, tokens %v; want both stores and no token reader", stores.Nodes, stores.Segments, stores.Tokens)
	}
	if d, ok := stores.Nodes.(interface{ Dir() string }); !ok || d.Dir() != dir {
		t.Errorf("node store %T: want the local store of %s", stores.Nodes, dir)
	}
	if err := stores.Close(); err != nil {
		t.Fatal(err)
	}
	// The directory's lock was released: it opens again.
	segs, closeSegs, err := o.OpenSegments(context.Background())
	if err != nil || segs == nil {
		t.Fatalf("OpenSegments after Close: %v", err)
	}
	if err := closeSegs(); err != nil {
		t.Fatal(err)
	}
}

func TestLocalDir(t *testing.T) {
	tests := []struct {
		name      string
		o         backend.Options
		want      string
		wantError bool
	}{
		{name: "the registry's", o: backend.Options{Registry: config.Registry{DataDir: "/srv/firn"}, StateHome: "/state", Home: "/home/u"}, want: "/srv/firn"},
		{name: "XDG_STATE_HOME", o: backend.Options{StateHome: "/state", Home: "/home/u"}, want: "/state/firn"},
		{name: "home", o: backend.Options{Home: "/home/u"}, want: "/home/u/.local/state/firn"},
		{name: "none", o: backend.Options{}, wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.o.LocalDir()
			if (err != nil) != tt.wantError || got != tt.want {
				t.Fatalf("LocalDir: %q, %v; want %q (error %v)", got, err, tt.want, tt.wantError)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name string
		r    config.Registry
		want string
	}{
		{name: "local, no home to find it", r: config.Registry{Store: "local", Namespace: "x"}, want: "local data directory"},
		{name: "local, where its state lives", r: config.Registry{Store: "local", DataDir: "/srv/firn"}, want: "local data directory /srv/firn"},
		{name: "etcd default", r: config.Registry{Store: "etcd"}, want: `etcd namespace "/firn/default/"`},
		{name: "sql default", r: config.Registry{Store: "mysql"}, want: `mysql namespace "default"`},
		{name: "named", r: config.Registry{Store: "postgres", Namespace: "orders"}, want: `postgres namespace "orders"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (backend.Options{Registry: tt.r}).Describe(); got != tt.want {
				t.Fatalf("Describe: %q; want %q", got, tt.want)
			}
		})
	}
}

// TestOpenSQLWithTokens: with Tinyid's table and Tokens set, Open hands
// back the reader of the token table in the same database (the caller
// starts and closes it); OpenSegments opens the same segment table.
func TestOpenSQLWithTokens(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			dsn := testenv.Endpoint(t, map[string]string{"postgres": "FIRN_TEST_POSTGRES", "mysql": "FIRN_TEST_MYSQL"}[kind])
			o := options(config.Registry{Store: kind, DSN: dsn}, config.Segments{Format: "tinyid", TokenTable: "tiny_id_token_backend"})
			o.Tokens = true
			stores, err := o.Open(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer stores.Close()
			if stores.Nodes == nil || stores.Segments == nil || stores.Tokens == nil || stores.Tokens.Table() != "tiny_id_token_backend" {
				t.Fatalf("Open: nodes %v, segments %v, tokens %v; want both stores and the reader of tiny_id_token_backend", stores.Nodes, stores.Segments, stores.Tokens)
			}
			segs, closeSegs, err := o.OpenSegments(context.Background())
			if err != nil || segs == nil {
				t.Fatalf("OpenSegments: %v", err)
			}
			if err := closeSegs(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestOpenRetrying: bad input is returned at once; an unreachable store
// is tried again until ctx ends.
func TestOpenRetrying(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bad := backend.Options{Registry: config.Registry{Store: "mysql", DSN: "u:pw@tcp(h:3306)", DialTimeout: time.Second}, Segments: config.Segments{Format: "leaf"}}
	if _, err := bad.OpenRetrying(context.Background(), log, nil); !errors.Is(err, backend.ErrConfig) {
		t.Fatalf("OpenRetrying of a bad DSN: %v; want ErrConfig at once", err)
	}
	ln := closedPort(t)
	down := backend.Options{Registry: config.Registry{Store: "mysql", DSN: "u:pw@tcp(" + ln + ")/db", DialTimeout: 200 * time.Millisecond}, Segments: config.Segments{Format: "leaf"}}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	var told []error
	_, err := down.OpenRetrying(ctx, log, func(err error) { told = append(told, err) })
	var ue *backend.UnreachableError
	if !errors.As(err, &ue) || ctx.Err() == nil {
		t.Fatalf("OpenRetrying of a store that does not answer: %v (ctx %v); want UnreachableError once ctx ended", err, ctx.Err())
	}
	if len(told) == 0 || !errors.As(told[0], &ue) || !strings.Contains(told[0].Error(), ln) {
		t.Fatalf("unready told %v; want each failed try, naming the store", told)
	}
}

// TestRefusedIsNotSilence: an etcd or ZooKeeper whose every server
// refuses the connection is reported as refused, where the clients, which
// retry until the dial timeout, would say only that no answer came; one
// server that accepts and never answers keeps "no answer".
func TestRefusedIsNotSilence(t *testing.T) {
	refused := closedPort(t)
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = silent.Close() })
	for _, tc := range []struct {
		store string
		eps   []string
		want  string
	}{
		{"etcd", []string{"http://" + refused}, "connect: connection refused"},
		{"etcd", []string{refused, "http://" + silent.Addr().String()}, "no answer within"},
		{"zookeeper", []string{refused}, "connect: connection refused"},
		{"zookeeper", []string{refused, silent.Addr().String()}, "no answer within"},
	} {
		t.Run(tc.store+" "+strings.Join(tc.eps, ","), func(t *testing.T) {
			o := options(config.Registry{Store: tc.store, Endpoints: tc.eps, DialTimeout: 300 * time.Millisecond}, config.Segments{})
			_, err := o.Open(context.Background())
			var ue *backend.UnreachableError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.store+" ") {
				t.Fatalf("%v; want an UnreachableError of %s saying %q", err, tc.store, tc.want)
			}
		})
	}
}

// TestCheckReserves: the backend table's reserves column agrees with the
// store opened (zkstore's Store implements nodeid.Reserver, checked where
// it is declared), and a store without one is refused, naming the one
// that keeps one.
func TestCheckReserves(t *testing.T) {
	local := options(config.Registry{Store: "local", DataDir: t.TempDir()}, config.Segments{})
	err := local.CheckReserves()
	if !errors.Is(err, backend.ErrConfig) || !strings.Contains(err.Error(), "use --store zookeeper") {
		t.Fatalf("local: %v; want a configuration error pointing to --store zookeeper", err)
	}
	nodes, closeNodes, err := local.OpenNodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer closeNodes()
	if _, ok := nodes.(nodeid.Reserver); ok {
		t.Fatalf("the local store keeps a reservation, but the table says it does not")
	}
	for _, kind := range []string{"etcd", "postgres", "mysql"} {
		if err := options(config.Registry{Store: kind}, config.Segments{}).CheckReserves(); err == nil {
			t.Errorf("%s: no refusal", kind)
		}
	}
	if err := options(config.Registry{Store: "zookeeper"}, config.Segments{}).CheckReserves(); err != nil {
		t.Errorf("zookeeper: %v", err)
	}
}

// TestLedgerDefaultNamespaceFitsEveryKind: an empty ledger.namespace
// stands for a namespace each store that can hold a ledger accepts (etcd
// refused "firn-ledger", which is no key prefix), spelled by the kind
// as the registry's default is.
func TestLedgerDefaultNamespaceFitsEveryKind(t *testing.T) {
	dsns := map[string]string{"postgres": "postgres://u@h:5432/db", "mysql": "u@tcp(h:3306)/db"}
	checked := 0
	for _, k := range store.Kinds() {
		if !k.Ledgers {
			continue
		}
		g := config.Ledger{Store: k.Name}
		if k.Database {
			g.DSN = dsns[k.Name]
		} else {
			g.Endpoints = []string{"http://127.0.0.1:2379"}
		}
		s := g.Settings()
		if err := store.Check(s); err != nil {
			t.Errorf("ledger on %s with no namespace set (%q): %v", k.Name, s.Namespace, err)
		}
		checked++
	}
	if checked < 3 {
		t.Fatalf("%d store kinds hold a ledger; want etcd, postgres and mysql", checked)
	}
}
