package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/firn-id/firn/client"
)

// httpCaller returns, for each worker, a caller of the HTTP route of cfg.
// Plain http:// targets get a raw HTTP/1.1 keep-alive connection per
// worker, which costs the load generator a few microseconds a request
// where net/http's client costs several times that: on a machine it
// shares with the server, a heavy generator takes the CPU the server
// would use. https:// targets use net/http.
func httpCaller(cfg *settings) func() caller {
	u, err := url.Parse(strings.TrimRight(cfg.targets[0], "/") + httpPath(cfg))
	if err != nil || u.Scheme != "http" {
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.workers, ForceAttemptHTTP2: true,
			TLSClientConfig: cfg.tlsConf}}
		c := netHTTPCaller(hc, u.String(), cfg.token, answerIDs(cfg))
		return func() caller { return c }
	}
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: firn-bench\r\n"
	if cfg.token != "" {
		req += "Authorization: Bearer " + cfg.token + "\r\n"
	}
	req += "\r\n"
	parse := answerIDs(cfg)
	return func() caller {
		rc := &rawHTTP{addr: u.Host, req: []byte(req)}
		return func(ctx context.Context, dst []int64) ([]int64, error) {
			status, body, err := rc.do(ctx)
			if err != nil {
				return dst, err
			}
			return parse(dst, status, body)
		}
	}
}

// httpPath is the path and query of cfg's route.
func httpPath(cfg *settings) string {
	tag := url.PathEscape(cfg.tag)
	switch cfg.protocol {
	case "leaf":
		if cfg.mode == "segment" {
			return "/api/segment/get/" + tag
		}
		return "/api/snowflake/get/bench"
	case "tinyid":
		return "/tinyid/id/nextIdSimple?bizType=" + url.QueryEscape(cfg.tag) + "&batchSize=" + strconv.Itoa(cfg.batch) +
			"&token=" + url.QueryEscape(cfg.token)
	}
	p := "/v1/snowflake/"
	if cfg.mode == "segment" {
		p = "/v1/segments/" + tag + "/"
	}
	if cfg.batch == 1 {
		return p + "next?format=text"
	}
	return p + "batch?format=text&count=" + strconv.Itoa(cfg.batch)
}

func netHTTPCaller(hc *http.Client, u, token string, parse answerParser) caller {
	return func(ctx context.Context, dst []int64) ([]int64, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return dst, err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return dst, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return dst, err
		}
		return parse(dst, resp.StatusCode, body)
	}
}

// answerParser appends the IDs of an answer to dst.
type answerParser func(dst []int64, status int, body []byte) ([]int64, error)

// answerIDs is the parser of cfg's route: firn's text answer by the
// client's rule (client.AppendText: every ID whole, as many as asked),
// Leaf's one number and Tinyid's comma-separated list by theirs, which
// are not firn's API and which the client does not speak.
func answerIDs(cfg *settings) answerParser {
	return func(dst []int64, status int, body []byte) ([]int64, error) {
		if status != http.StatusOK {
			return dst, fmt.Errorf("%d %s: %s", status, http.StatusText(status), bytes.TrimSpace(body))
		}
		if cfg.protocol == "http" {
			return client.AppendText(dst, body, cfg.batch)
		}
		return parseCompat(dst, body, cfg.batch) // Leaf's: batch 1, as validated
	}
}

// parseCompat appends the want IDs of Leaf's answer (one number) or
// Tinyid's nextIdSimple (numbers separated by commas), each in canonical
// decimal. Anything else appends nothing: a body cut after a comma, or a
// number a server never writes, would otherwise reach the uniqueness check
// as IDs.
func parseCompat(dst []int64, body []byte, want int) ([]int64, error) {
	fields := strings.Split(strings.TrimSuffix(string(body), "\n"), ",")
	if len(fields) != want {
		return dst, fmt.Errorf("answer %.40q: asked for %d IDs, got %d", body, want, len(fields))
	}
	n := len(dst)
	for _, f := range fields {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil || id < 0 || strconv.FormatInt(id, 10) != f {
			return dst[:n], fmt.Errorf("answer %.40q is not IDs: %q", body, f)
		}
		dst = append(dst, id)
	}
	return dst, nil
}

// rawHTTP is one HTTP/1.1 keep-alive connection sending one fixed
// request: enough HTTP for a load generator (Content-Length or chunked
// answers), redialled after any error.
type rawHTTP struct {
	addr string
	req  []byte
	conn net.Conn
	br   *bufio.Reader
}

func (c *rawHTTP) do(ctx context.Context) (int, []byte, error) {
	if c.conn == nil {
		d := net.Dialer{Timeout: 5 * time.Second}
		conn, err := d.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			return 0, nil, err
		}
		if dl, ok := ctx.Deadline(); ok {
			_ = conn.SetDeadline(dl.Add(5 * time.Second)) // no answer outlives the run by much
		}
		c.conn, c.br = conn, bufio.NewReaderSize(conn, 64<<10)
	}
	status, body, closeAfter, err := c.roundTrip()
	if err != nil || closeAfter {
		_ = c.conn.Close()
		c.conn = nil
	}
	return status, body, err
}

func (c *rawHTTP) roundTrip() (status int, body []byte, closeAfter bool, err error) {
	if _, err := c.conn.Write(c.req); err != nil {
		return 0, nil, true, err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, nil, true, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, nil, true, fmt.Errorf("not an HTTP answer: %.40q", line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, nil, true, fmt.Errorf("status line %.40q: %w", line, err)
	}
	proto := string(line[:8]) // ReadSlice's line is overwritten by the next read
	length, chunked := -1, false
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, nil, true, err
		}
		h := bytes.TrimRight(line, "\r\n")
		if len(h) == 0 {
			break
		}
		name, value, _ := bytes.Cut(h, []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, nil, true, fmt.Errorf("Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			closeAfter = bytes.EqualFold(value, []byte("close"))
		}
	}
	switch {
	case chunked:
		if body, err = io.ReadAll(httputil.NewChunkedReader(c.br)); err != nil {
			return 0, nil, true, err
		}
		for { // trailers, then the empty line
			line, err := c.br.ReadSlice('\n')
			if err != nil {
				return 0, nil, true, err
			}
			if len(bytes.TrimRight(line, "\r\n")) == 0 {
				break
			}
		}
	case length >= 0:
		body = make([]byte, length)
		if _, err := io.ReadFull(c.br, body); err != nil {
			return 0, nil, true, err
		}
	default:
		// A body that ends with the connection is not read: a server
		// that kept the connection open would hold the worker, and a
		// batch cut at any bound would be misread. Go's answer to plain
		// HTTP on a TLS port is one: HTTP/1.0 400 with no length.
		return 0, nil, true, fmt.Errorf("%s %d with neither Content-Length nor chunked encoding", proto, status)
	}
	return status, body, closeAfter, nil
}
