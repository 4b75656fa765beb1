package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/firnpb"
)

// transport is one server, over one protocol.
type transport interface {
	// batch returns n IDs: snowflake when tag is empty, else of the tag;
	// unordered is true when the answer declares its IDs in no order
	// (api.OrderUnordered), false when it declares them increasing or
	// says nothing.
	batch(ctx context.Context, tag string, n int) (ids []int64, unordered bool, err error)
	// wide returns n UUIDv7s ("uuid") or ULIDs ("ulid") in their text
	// form, made by the server from its generator's slots.
	wide(ctx context.Context, form string, n int) ([]string, error)
	// check returns nil when the server is ready to serve.
	check(ctx context.Context) error
	close() error
}

// grpcTransport talks firnpb over one connection, dialled on first use
// and dialled anew after a failed dial (conn).
type grpcTransport struct {
	addr  string
	token string
	tls   *tls.Config

	mu     sync.Mutex
	cur    *grpcConn // nil until first use
	closed bool
}

// grpcConn is one connection and the calls using it.
type grpcConn struct {
	cc    *grpc.ClientConn
	firn  firnpb.FirnClient
	users int  // calls holding it; guarded by grpcTransport.mu
	old   bool // replaced: closed once its last user lets go
}

// conn returns the connection for one call, to be handed back with
// release. With fresh set, a connection whose last dial failed
// (TRANSIENT_FAILURE) is replaced by a new one. gRPC keeps a connection
// in that state until a dial succeeds: a request on it fails at once
// with the error of the last dial, made perhaps before the server came
// back, and no state change tells a caller that a new dial failed too,
// so waiting for one lasts the request's whole timeout while the server
// refuses. A new connection's first request waits for its own dial and
// fails with that dial's error: a refused connection is reported as
// refused, at once, on every try.
func (t *grpcTransport) conn(fresh bool) (*grpcConn, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, &Error{Kind: ErrClosed, Endpoint: t.addr, Code: "closed", Message: "the client is closed"}
	}
	if c := t.cur; c != nil && fresh && c.cc.GetState() == connectivity.TransientFailure {
		t.retire(c)
		t.cur = nil
	}
	if t.cur == nil {
		creds := insecure.NewCredentials()
		if t.tls != nil {
			creds = credentials.NewTLS(t.tls)
		}
		cc, err := grpc.Dial(t.addr, grpc.WithTransportCredentials(creds))
		if err != nil {
			return nil, &Error{Kind: ErrInvalid, Endpoint: t.addr, Code: "dial", Message: err.Error()}
		}
		t.cur = &grpcConn{cc: cc, firn: firnpb.NewFirnClient(cc)}
	}
	t.cur.users++
	return t.cur, nil
}

// release hands back a connection conn returned.
func (t *grpcTransport) release(c *grpcConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c.users--
	if c.old && c.users == 0 {
		_ = c.cc.Close()
	}
}

// retire marks c replaced, and closes it unless a call still uses it: a
// call on a closed connection would fail with "the client connection is
// closing", which is not what the server did. Called with t.mu held.
func (t *grpcTransport) retire(c *grpcConn) {
	c.old = true
	if c.users == 0 {
		_ = c.cc.Close()
	}
}

func (t *grpcTransport) ctx(ctx context.Context) context.Context {
	if t.token == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+t.token)
}

func (t *grpcTransport) batch(ctx context.Context, tag string, n int) ([]int64, bool, error) {
	c, err := t.conn(true)
	if err != nil {
		return nil, false, err
	}
	defer t.release(c)
	var resp *firnpb.BatchResponse
	var md metadata.MD
	if tag == "" {
		resp, err = c.firn.Batch(t.ctx(ctx), &firnpb.BatchRequest{Count: int32(n)}, grpc.Header(&md))
	} else {
		resp, err = c.firn.SegmentBatch(t.ctx(ctx), &firnpb.SegmentBatchRequest{Tag: tag, Count: int32(n)}, grpc.Header(&md))
	}
	if err != nil {
		return nil, false, t.error(err)
	}
	if len(resp.Ids) != n {
		return nil, false, &Error{Kind: ErrUnavailable, Endpoint: t.addr, Code: "short_batch",
			Message: fmt.Sprintf("asked for %d IDs, got %d", n, len(resp.Ids))}
	}
	return resp.Ids, unordered(md.Get(api.Order)), nil
}

// unordered reports whether the values of an answer's api.Order header
// declare its IDs unordered: exactly one value, api.OrderUnordered.
// Anything else, no header included, reads as increasing, so a batch is
// checked as strictly as its answer allows.
func unordered(order []string) bool { return len(order) == 1 && order[0] == api.OrderUnordered }

func (t *grpcTransport) check(ctx context.Context) error {
	c, err := t.conn(false)
	if err != nil {
		return err
	}
	defer t.release(c)
	// A server that was down leaves the connection in a reconnect backoff
	// that grows with the outage: dial again now and wait for it within
	// the check's deadline, rather than fail with the last dial's error.
	c.cc.ResetConnectBackoff()
	resp, err := healthpb.NewHealthClient(c.cc).Check(ctx, &healthpb.HealthCheckRequest{Service: firnpb.Firn_ServiceDesc.ServiceName},
		grpc.WaitForReady(true))
	if err != nil {
		return t.error(err)
	}
	if resp.Status != healthpb.HealthCheckResponse_SERVING {
		return &Error{Kind: ErrUnavailable, Endpoint: t.addr, Code: "not_ready", Message: resp.Status.String()}
	}
	return nil
}

// error turns a gRPC status into an *Error. The server's messages start
// with its error code ("unknown_tag: …").
func (t *grpcTransport) error(err error) error {
	st := status.Convert(err)
	code, msg, ok := strings.Cut(st.Message(), ": ")
	if !ok || strings.ContainsAny(code, " \t") {
		code, msg = "transport", st.Message()
	}
	kind := ErrUnavailable
	switch st.Code() {
	case codes.NotFound:
		kind = ErrUnknownTag
	case codes.Unauthenticated, codes.PermissionDenied:
		kind = ErrUnauthorized
	case codes.InvalidArgument:
		kind = ErrInvalid
	}
	return &Error{Kind: kind, Endpoint: t.addr, Code: code, Message: msg}
}

func (t *grpcTransport) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.cur != nil {
		t.retire(t.cur)
		t.cur = nil
	}
	return nil
}

// httpTransport talks the /v1 HTTP API, IDs as text, one per line.
type httpTransport struct {
	base  string // scheme://host:port, no trailing slash
	token string
	hc    *http.Client
}

func (t *httpTransport) batch(ctx context.Context, tag string, n int) ([]int64, bool, error) {
	path := "/v1/snowflake/batch"
	if tag != "" {
		path = "/v1/segments/" + url.PathEscape(tag) + "/batch"
	}
	resp, err := t.send(ctx, http.MethodGet, path+"?format=text&count="+strconv.Itoa(n), nil)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	// At most 20 digits and a newline an ID: a longer body is not an answer.
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(n)*21+1))
	if err != nil {
		return nil, false, &Error{Kind: ErrUnavailable, Endpoint: t.base, Code: "transport", Message: err.Error()}
	}
	ids, err := AppendText(make([]int64, 0, n), b, n)
	if err != nil {
		return nil, false, asError(err, t.base)
	}
	return ids, unordered(resp.Header.Values(api.Order)), nil
}

func (t *httpTransport) check(ctx context.Context) error {
	body, err := t.get(ctx, "/readyz")
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, body)
	return body.Close()
}

// get returns the body of a 200 answer, or the answer's error.
func (t *httpTransport) get(ctx context.Context, path string) (io.ReadCloser, error) {
	return t.do(ctx, http.MethodGet, path, nil)
}

// do sends a request, with body as its JSON body unless it is nil, and
// returns the body of a 2xx answer, or the answer's error.
func (t *httpTransport) do(ctx context.Context, method, path string, body []byte) (io.ReadCloser, error) {
	resp, err := t.send(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// send is do, returning the whole 2xx answer.
func (t *httpTransport) send(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.base+path, rd)
	if err != nil {
		return nil, &Error{Kind: ErrInvalid, Endpoint: t.base, Code: "request", Message: err.Error()}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return nil, &Error{Kind: ErrUnavailable, Endpoint: t.base, Code: "transport", Message: err.Error()}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	var e api.ErrorBody
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, &e) != nil || e.Error.Code == "" {
		e.Error.Code, e.Error.Message = "http_"+strconv.Itoa(resp.StatusCode), strings.TrimSpace(string(b))
	}
	kind := ErrUnavailable
	switch {
	case resp.StatusCode == http.StatusNotFound && e.Error.Code == "unknown_tag":
		kind = ErrUnknownTag
	case resp.StatusCode == http.StatusConflict && e.Error.Code == "tag_exists":
		kind = ErrTagExists
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		kind = ErrUnauthorized
	case resp.StatusCode == http.StatusBadRequest:
		kind = ErrInvalid
	}
	return nil, &Error{Kind: kind, Endpoint: t.base, Code: e.Error.Code, Message: e.Error.Message}
}

func (t *httpTransport) close() error {
	t.hc.CloseIdleConnections()
	return nil
}

func (t *grpcTransport) wide(ctx context.Context, form string, n int) ([]string, error) {
	c, err := t.conn(true)
	if err != nil {
		return nil, err
	}
	defer t.release(c)
	f := firnpb.WideForm_WIDE_FORM_UUID
	if form == "ulid" {
		f = firnpb.WideForm_WIDE_FORM_ULID
	}
	resp, err := c.firn.WideBatch(t.ctx(ctx), &firnpb.WideBatchRequest{Form: f, Count: int32(n)})
	if err != nil {
		return nil, t.error(err)
	}
	if len(resp.Ids) != n {
		return nil, &Error{Kind: ErrUnavailable, Endpoint: t.addr, Code: "short_batch",
			Message: fmt.Sprintf("asked for %d IDs, got %d", n, len(resp.Ids))}
	}
	return resp.Ids, nil
}

func (t *httpTransport) wide(ctx context.Context, form string, n int) ([]string, error) {
	body, err := t.get(ctx, "/v1/"+form+"/batch?format=text&count="+strconv.Itoa(n))
	if err != nil {
		return nil, err
	}
	defer body.Close()
	// At most 36 characters and a newline an ID (a UUID).
	b, err := io.ReadAll(io.LimitReader(body, int64(n)*37+1))
	if err != nil {
		return nil, &Error{Kind: ErrUnavailable, Endpoint: t.base, Code: "transport", Message: err.Error()}
	}
	lines, err := textLines(b, n)
	if err != nil {
		return nil, asError(err, t.base)
	}
	ids := make([]string, len(lines))
	for i, l := range lines {
		ids[i] = string(l)
	}
	return ids, nil
}
