package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/opaque"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// A firn serve on the local store holds its data directory's lock, so
// firn next and firn tag cannot open the directory beside it. The server
// writes its address into the directory (the discovery file, never a
// token); the commands then ask the server instead.

// discoveryName is the discovery file in the data directory.
const discoveryName = "serve.json"

// discovery is the discovery file's content: the address only.
type discovery struct {
	HTTP string `json:"http"` // base URL, such as http://127.0.0.1:8080
}

// writeDiscovery records where the server listens, replacing the file
// atomically.
func writeDiscovery(dir, base string) error {
	b, err := json.Marshal(discovery{HTTP: base})
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, discoveryName+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write discovery file: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, discoveryName)); err != nil {
		return fmt.Errorf("write discovery file: %w", err)
	}
	return nil
}

// removeDiscovery removes the discovery file; a missing one is fine.
func removeDiscovery(dir string) error {
	if err := os.Remove(filepath.Join(dir, discoveryName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove discovery file: %w", err)
	}
	return nil
}

// readDiscovery returns the base URL of the server holding dir.
func readDiscovery(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, discoveryName))
	if err != nil {
		return "", err
	}
	var d discovery
	if err := json.Unmarshal(b, &d); err != nil || d.HTTP == "" {
		return "", fmt.Errorf("discovery file %s: not firn serve's", filepath.Join(dir, discoveryName))
	}
	return d.HTTP, nil
}

// remote is a running firn serve, asked over its HTTP API.
type remote struct {
	base  string // base URL without a trailing slash
	token string // bearer token, or empty
	hc    *http.Client
}

// newRemote checks base and returns a client of it.
func newRemote(base, token, ca string) (*remote, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, usagef("--server %q: want a base URL such as http://127.0.0.1:8080 (no credentials, query or fragment; the token goes in --token)", base)
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	if ca != "" {
		conf, err := loadTLS(ca, false) // the one loader firn bench uses too
		if err != nil {
			return nil, err
		}
		hc.Transport = &http.Transport{TLSClientConfig: conf, Proxy: http.ProxyFromEnvironment}
	}
	return &remote{base: strings.TrimSuffix(base, "/"), token: token, hc: hc}, nil
}

// remoteError is a server's refusal.
type remoteError struct {
	Status  int
	Code    string
	Message string
}

func (e *remoteError) Error() string { return e.Message }

// Is maps the server's codes to the errors a local store returns.
func (e *remoteError) Is(target error) bool {
	switch e.Code {
	case "unknown_tag":
		return target == segment.ErrUnknownTag
	case "tag_exists":
		return target == segment.ErrTagExists
	}
	return false
}

// call sends a request with an optional JSON body and decodes a JSON
// answer into out, or returns the server's error.
func (r *remote) call(ctx context.Context, method, path string, in, out any) error {
	resp, err := r.send(ctx, method, path, in, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(out); err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, r.base+path, err)
	}
	return nil
}

func (r *remote) send(ctx context.Context, method, path string, in any, accept string) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := r.hc.Do(req)
	var unknownCA x509.UnknownAuthorityError
	if errors.As(err, &unknownCA) {
		return nil, usagef("firn serve at %s: its certificate is signed by an authority this machine does not trust: give the CA's PEM file with --ca", r.base)
	}
	if err != nil {
		return nil, fmt.Errorf("firn serve at %s: %w", r.base, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&e)
	re := &remoteError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
	if re.Message == "" {
		re.Message = resp.Status
	}
	re.Message = fmt.Sprintf("firn serve at %s: %s", r.base, re.Message)
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, usagef("%s (give a token with the needed scope: --token or FIRN_TOKEN)", re.Message)
	case resp.StatusCode/100 == 4 && re.Code != "unknown_tag" && re.Code != "tag_exists":
		return nil, usagef("%s", re.Message)
	}
	return nil, re
}

// The segment store's admin operations, through the server's admin API.

type remoteTag struct {
	Tag         string `json:"tag"`
	Next        int64  `json:"next,string"`
	Step        int64  `json:"step"`
	Delta       int64  `json:"delta"`
	Remainder   int64  `json:"remainder"`
	Description string `json:"description"`
	Opaque      string `json:"opaque"`
}

func (r *remote) Tags(ctx context.Context) ([]segment.TagInfo, error) {
	var out struct {
		Tags []remoteTag `json:"tags"`
	}
	if err := r.call(ctx, http.MethodGet, "/v1/segments", nil, &out); err != nil {
		return nil, err
	}
	tags := make([]segment.TagInfo, 0, len(out.Tags))
	for _, t := range out.Tags {
		tags = append(tags, segment.TagInfo{Tag: t.Tag, Next: t.Next, Step: t.Step, Delta: t.Delta, Remainder: t.Remainder, Description: t.Description, Opaque: t.Opaque})
	}
	return tags, nil
}

func (r *remote) CreateTag(ctx context.Context, tag string, first, step int64, desc string) error {
	in := map[string]any{"tag": tag, "first": strconv.FormatInt(first, 10), "step": step, "description": desc}
	return r.call(ctx, http.MethodPost, "/v1/segments", in, nil)
}

func (r *remote) SetStep(ctx context.Context, tag string, step int64) error {
	return r.call(ctx, http.MethodPatch, "/v1/segments/"+url.PathEscape(tag), map[string]any{"step": step}, nil)
}

func (r *remote) Advance(ctx context.Context, tag string, to int64) (int64, error) {
	var out struct {
		Next int64 `json:"next,string"`
	}
	err := r.call(ctx, http.MethodPost, "/v1/segments/"+url.PathEscape(tag)+"/advance", map[string]any{"to": strconv.FormatInt(to, 10)}, &out)
	return out.Next, err
}

// draw writes n IDs from path (a batch route), one per line, asking for
// at most max per request.
func (r *remote) draw(ctx context.Context, path string, n, max int, enc idtext.Encoding, w io.Writer) error {
	return r.drawLines(ctx, path, n, max, w, decimalID, enc)
}

// idLine checks one line of a text answer: its longest length, newline
// included, and whether it is an ID.
type idLine struct {
	size  int
	valid func(string) bool
}

// decimalID is a line of an int64 ID's answer.
var decimalID = idLine{size: 21, valid: func(s string) bool {
	id, err := strconv.ParseInt(s, 10, 64)
	return err == nil && id >= 0 && strconv.FormatInt(id, 10) == s
}}

// drawLines draws n IDs from path, at most max a request, copying each
// line that line accepts to w, a decimal ID written in enc.
func (r *remote) drawLines(ctx context.Context, path string, n, max int, w io.Writer, line idLine, enc idtext.Encoding) error {
	for n > 0 {
		k := min(n, max)
		resp, err := r.send(ctx, http.MethodGet, path+"?format=text&count="+strconv.Itoa(k), nil, "text/plain")
		if err != nil {
			return err
		}
		got, err := copyIDs(w, resp.Body, k, line, enc)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("firn serve at %s: %w", r.base, err)
		}
		n -= got
	}
	return nil
}

// copyIDs copies want lines of IDs from r to w, checking each with line;
// a decimal ID is written in enc.
func copyIDs(w io.Writer, r io.Reader, want int, line idLine, enc idtext.Encoding) (int, error) {
	sc := bufio.NewScanner(io.LimitReader(r, int64(want*line.size)))
	got := 0
	var out []byte
	for sc.Scan() {
		if !line.valid(sc.Text()) {
			return got, fmt.Errorf("not an ID: %q", sc.Text())
		}
		if enc == idtext.Decimal {
			out = append(append(out, sc.Text()...), '\n')
		} else {
			id, err := strconv.ParseUint(sc.Text(), 10, 64)
			if err != nil {
				return got, fmt.Errorf("not a decimal ID to write in %s: %q", enc, sc.Text())
			}
			out = append(enc.Append(out, id), '\n')
		}
		got++
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if got != want {
		return 0, fmt.Errorf("asked for %s, got %d", plural(want, "ID"), got)
	}
	_, err := w.Write(out)
	return got, err
}

// serverInfo is what a server says of its snowflake generator.
type serverInfo struct {
	Layout      string `json:"layout"`
	Fingerprint string `json:"fingerprint"`
	Node        uint64 `json:"node"`
	MaxBatch    int    `json:"max_batch"`
	Opaque      string `json:"opaque"` // the permutation's fingerprint in opaque mode
}

func (r *remote) info(ctx context.Context) (serverInfo, error) {
	var out serverInfo
	err := r.call(ctx, http.MethodGet, "/v1/snowflake/info", nil, &out)
	return out, err
}

// remoteFlags name a running firn serve explicitly.
type remoteFlags struct {
	server, token, ca string
}

const remoteFlagsUsage = `Beside a running firn serve (the local data directory locked by it), the
command asks the server instead, found through the address it leaves in the
data directory; layout and node flags must then match the server's.
  --server URL        ask this firn serve (http://host:port) instead of a store
  --token T           its bearer token (default: the variable FIRN_TOKEN)
  --ca FILE           PEM certificates to trust for an https:// server whose
                      certificate this machine's roots do not
`

func (f *remoteFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.server, "server", "", "")
	fs.StringVar(&f.token, "token", os.Getenv("FIRN_TOKEN"), "")
	fs.StringVar(&f.ca, "ca", "", "")
}

// explicit returns the server named by --server, or nil.
func (f *remoteFlags) explicit(sf *storeFlags) (*remote, error) {
	if f.server == "" {
		return nil, nil
	}
	if sf.kind != "local" || sf.dataDir != "" || sf.dsn != "" || sf.endpoints != "" || sf.namespace != "" {
		return nil, usagef("--server asks a running firn serve: store flags do not apply")
	}
	return newRemote(f.server, f.token, f.ca)
}

// beside returns the firn serve holding the local data directory when
// err is the directory's lock and the server left its address there;
// otherwise it returns err.
func (f *remoteFlags) beside(sf *storeFlags, err error) (*remote, error) {
	if !errors.Is(err, localstore.ErrLocked) || sf.kind != "local" {
		return nil, err
	}
	dir, derr := sf.localDir()
	if derr != nil {
		return nil, err
	}
	base, derr := readDiscovery(dir)
	if derr != nil {
		return nil, err // held by another command, not a server
	}
	return newRemote(base, f.token, f.ca)
}

// nextRemote prints n snowflake IDs from a running server, refusing when
// the layout or the node asked for differ from the server's.
func nextRemote(ctx context.Context, r *remote, l snowflake.Layout, perm *opaque.Permutation, enc idtext.Encoding, node *uint64, n int, f idFormat, stdout io.Writer) error {
	info, err := r.info(ctx)
	if err != nil {
		return err
	}
	if info.Fingerprint != l.Fingerprint() {
		return usagef("firn serve at %s issues IDs of %s; this command asked for %s: give the server's layout flags, or none; or, for IDs of another layout (another ID space), a data directory of their own (--data-dir DIR)", r.base, info.Layout, l.String())
	}
	if want := permutationName(perm); info.Opaque != want {
		return usagef("firn serve at %s issues %s; this command asked for %s: give the server's opaque flags, or its --config", r.base, opaqueDesc(info.Opaque), opaqueDesc(want))
	}
	if node != nil && *node != info.Node {
		return usagef("firn serve at %s holds node %d; this command asked for node %d", r.base, info.Node, *node)
	}
	w := bufio.NewWriter(stdout)
	if err := r.drawLines(ctx, f.path, n, max(1, info.MaxBatch), w, f.line, enc); err != nil {
		return errors.Join(err, w.Flush())
	}
	return w.Flush()
}

// maxBatch is the server's batch limit, or the default where the token
// may not ask (its scope is a tag's).
func (r *remote) maxBatch(ctx context.Context) int {
	if info, err := r.info(ctx); err == nil && info.MaxBatch > 0 {
		return info.MaxBatch
	}
	return server.DefaultMaxBatch
}

const configFlagUsage = `  --config FILE       firn serve's configuration file (docs/config.md): the
                      settings this command takes apply, FIRN_… variables
                      override them, flags override both; the others, and
                      its node, are ignored
`
