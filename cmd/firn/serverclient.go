package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// remote is a running firn serve, asked through the public client over
// its HTTP API: the CLI reads answers by the client's rules, so a body cut
// short is refused here as in any program using the client.
type remote struct {
	base string // as given, for messages
	c    *client.Client
}

// remoteTimeout bounds each request to the server.
const remoteTimeout = 30 * time.Second

// newRemote returns a client of base. The client checks base, by the
// rule every program using it follows, and names it redacted.
func newRemote(base, token, ca string) (*remote, error) {
	var err error
	cfg := client.Config{Endpoints: []string{base}, HTTP: true, Token: token, Timeout: remoteTimeout, Attempts: 1,
		// The CLI asks for at most the server's max_batch a request itself.
		MaxBatch: 1<<31 - 1}
	if ca != "" {
		if cfg.TLS, err = loadTLS(ca, false); err != nil { // the one loader firn bench uses too
			return nil, err
		}
	}
	c, err := client.New(cfg)
	var ee *client.EndpointError
	switch {
	case errors.As(err, &ee) && ee.Credentials: // the token goes in --token, not Config.Token
		return nil, usagef("--server %q: credentials in the URL: pass the token in --token", ee.Endpoint)
	case errors.As(err, &ee):
		return nil, usagef("--server %q: %s", ee.Endpoint, ee.Reason)
	case err != nil:
		return nil, err
	}
	return &remote{base: strings.TrimSuffix(base, "/"), c: c}, nil
}

// close closes the client; it has nothing buffered.
func (r *remote) close() { _ = r.c.Close(context.Background()) }

// err turns the client's errors into the CLI's, one line that says what
// to do: a URL of the wrong scheme, a port that is not firn's HTTP API, a
// token a header cannot carry, a refused token, a malformed request and a
// certificate this machine does not trust are usage errors (exit 2); an
// unknown or existing tag stays as it is for tagErr; the rest, a server
// not running among them, are failures.
func (r *remote) err(err error) error {
	var e *client.Error
	if err == nil || !errors.As(err, &e) {
		return err
	}
	switch f := e.Failure(); {
	case f == client.PlainHTTP:
		return usagef("firn serve at %s speaks plain HTTP: use http:// in --server", r.base)
	case f == client.HTTPSOnly:
		return usagef("firn serve at %s speaks HTTPS: use https:// in --server", r.base)
	case f == client.NotHTTP:
		return usagef("%s answers, but not in HTTP: that is not firn's HTTP port (a gRPC port?); give the address of its http_listen", r.base)
	case f == client.TokenNotSendable:
		return usagef("--token holds a character a header cannot carry (a newline, or another control character)")
	case f == client.UntrustedCertificate:
		return usagef("firn serve at %s: its certificate is signed by an authority this machine does not trust: give the CA's PEM file with --ca", r.base)
	case errors.Is(err, client.ErrUnauthorized):
		return usagef("firn serve at %s: %s (give a token with the needed scope: --token or FIRN_TOKEN)", r.base, e.Detail())
	case errors.Is(err, client.ErrInvalid):
		return usagef("firn serve at %s: %s", r.base, e.Detail())
	case f == client.Refused:
		return fmt.Errorf("is firn serve running at %s? (connection refused)", r.base)
	case f == client.Closed:
		return fmt.Errorf("firn serve at %s closed the connection without an answer: is it running, and is that firn's HTTP port (not its gRPC port)?", r.base)
	case f == client.NoAnswer:
		return fmt.Errorf("firn serve at %s: no answer: %s", r.base, e.Detail())
	}
	return err
}

// info is what the server says of its snowflake generator.
func (r *remote) info(ctx context.Context) (api.Info, error) {
	info, err := r.c.Info(ctx)
	return info, r.err(err)
}

// maxBatch is the server's batch limit, or the default where the token
// may not ask (its scope is a tag's).
func (r *remote) maxBatch(ctx context.Context) int {
	if info, err := r.c.Info(ctx); err == nil && info.MaxBatch > 0 {
		return info.MaxBatch
	}
	return server.DefaultMaxBatch
}

// The segment store's admin operations, through the server's admin API.

func (r *remote) Tags(ctx context.Context) ([]segment.TagInfo, error) {
	tags, err := r.c.Tags(ctx)
	if err != nil {
		return nil, r.err(err)
	}
	out := make([]segment.TagInfo, len(tags))
	for i, t := range tags {
		out[i] = t.Info()
	}
	return out, nil
}

func (r *remote) CreateTag(ctx context.Context, tag string, first, step int64, desc string) error {
	_, err := r.c.CreateTag(ctx, tag, first, step, desc)
	return r.err(err)
}

func (r *remote) SetStep(ctx context.Context, tag string, step int64) error {
	return r.err(r.c.SetStep(ctx, tag, step))
}

func (r *remote) Advance(ctx context.Context, tag string, to int64) (int64, error) {
	next, err := r.c.Advance(ctx, tag, to)
	return next, r.err(err)
}

// remoteFlags name a running firn serve explicitly.
type remoteFlags struct {
	server, token, ca string
	tokenGiven        bool // --token, not the variable FIRN_TOKEN
	fs                *flag.FlagSet
}

var remoteFlagsUsage = `Beside a running firn serve (the local data directory locked by it), the
command asks the server instead, found through the address it leaves in the
data directory; layout and node flags must then match the server's.
` + ownFlags(
	[2]string{"--server URL", "ask this firn serve (http://host:port) instead of a store"},
	[2]string{"--token T", "its bearer token (default: the variable FIRN_TOKEN)"},
	[2]string{"--ca FILE", "PEM certificates to trust for an https:// server whose certificate this machine's roots do not"},
) + `With no server to ask, --token and --ca are refused rather than ignored.
`

func (f *remoteFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.server, "server", "", "")
	f.token = os.Getenv("FIRN_TOKEN")
	fs.Func("token", "", func(t string) error { f.token, f.tokenGiven = t, true; return nil })
	fs.StringVar(&f.ca, "ca", "", "")
}

// explicit returns the server named by --server, or nil.
func (f *remoteFlags) explicit(sf *backend.Options) (*remote, error) {
	if f.server == "" {
		return nil, f.unused(sf)
	}
	if name := f.storeFlag(); name != "" {
		return nil, usagef("--server asks a running firn serve: --%s does not apply", name)
	}
	return newRemote(f.server, f.token, f.ca)
}

// storeFlag names a store flag given on the command line beside --server,
// or "". Store settings from the file or the environment (a shell that
// exports FIRN_REGISTRY_DSN for its servers) are not refused: --server
// says to ask the server, and they are left unused.
func (f *remoteFlags) storeFlag() (name string) {
	f.fs.Visit(func(fl *flag.Flag) {
		switch config.Setting(fl) {
		case "registry.store", "registry.data_dir", "registry.dsn", "registry.endpoints", "registry.namespace":
			if name == "" {
				name = fl.Name
			}
		}
	})
	return name
}

// unused refuses --ca and --token when no server can be asked: neither
// --server nor a firn serve that left its address in the local data
// directory. The command would otherwise run on the store and ignore
// them, and the user would not learn that the certificate or token they
// meant to use played no part.
func (f *remoteFlags) unused(sf *backend.Options) error {
	if f.ca == "" && !f.tokenGiven {
		return nil
	}
	if dir, local := sf.DataDir(); local {
		if _, err := backend.ReadDiscovery(dir); err == nil {
			return nil
		}
	}
	name := "--ca"
	if f.ca == "" {
		name = "--token"
	}
	return usagef("%s applies only with --server, or beside a running firn serve (none left its address in the data directory)", name)
}

// beside returns the firn serve holding the local data directory when
// err is the directory's lock and the server left its address there;
// otherwise it returns err.
func (f *remoteFlags) beside(sf *backend.Options, err error) (*remote, error) {
	dir, local := sf.DataDir()
	if !errors.Is(err, localstore.ErrLocked) || !local {
		return nil, err
	}
	base, derr := backend.ReadDiscovery(dir)
	if derr != nil {
		return nil, err // held by another command, not a server
	}
	return newRemote(base, f.token, f.ca)
}

// nextRemote prints n snowflake IDs from a running server, refusing when
// the layout or the node asked for differ from the server's.
// elsewhere says where IDs of another layout come from (otherSpace).
func nextRemote(ctx context.Context, r *remote, l snowflake.Layout, perm *opaque.Permutation, enc idtext.Encoding, node *uint64, n int, f idFormat, elsewhere string, stdout io.Writer) error {
	defer r.close()
	info, err := r.info(ctx)
	if err != nil {
		return err
	}
	if info.Fingerprint != l.Fingerprint() && info.Bits == l.BitsFingerprint() {
		// The same IDs named or split otherwise: another data directory
		// would be refused as well (the user's node directory records one
		// layout per ID bits).
		return usagef("firn serve at %s issues IDs of %s; this command asked for %s, the same IDs with other node fields: give the server's layout flags (%s)",
			r.base, info.Layout, l.String(), layoutFlagsFor(info.Layout))
	}
	if info.Fingerprint != l.Fingerprint() {
		return usagef("firn serve at %s issues IDs of %s; this command asked for %s: give the server's layout flags (%s); or, for IDs of another layout (another ID space), %s",
			r.base, info.Layout, l.String(), layoutFlagsFor(info.Layout), elsewhere)
	}
	if want := permutationName(perm); info.Opaque != want {
		return usagef("firn serve at %s issues %s; this command asked for %s: give the server's opaque flags, or its --config", r.base, opaqueDesc(info.Opaque), opaqueDesc(want))
	}
	if node != nil && *node != info.Node {
		return usagef("firn serve at %s holds node %d; this command asked for node %d", r.base, info.Node, *node)
	}
	w := bufio.NewWriter(stdout)
	if err := r.err(r.c.WriteLines(ctx, w, f.name, "", n, info.MaxBatch, enc)); err != nil {
		return errors.Join(err, w.Flush())
	}
	return w.Flush()
}
