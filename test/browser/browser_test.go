package browser_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/firn-id/firn/internal/digits"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/snowflake"
)

// xssTag is a tag name that would run script if the page inserted it as
// HTML.
const xssTag = `<img src=x onerror=alert(1)>`

// firnServe builds firn from this tree (in the root module) and runs firn serve on a loopback
// port with a data directory of its own; it returns the base URL.
func firnServe(t *testing.T, args ...string) string {
	t.Helper()
	bin := buildFirn(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--http", "127.0.0.1:0", "--grpc", "off",
		"--data-dir", filepath.Join(t.TempDir(), "data"), "--log-format", "json"}, args...)...)
	// Its own node directory too: every data directory of one user shares
	// node IDs and one layout, and these servers differ in layout.
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("firn serve logs:\n%s", logs.String())
		}
	})
	serving := regexp.MustCompile(`firn serving on (http://\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case base, ok := <-found:
		if !ok {
			t.Fatalf("firn serve ended before serving:\n%s", logs.String())
		}
		return base
	case <-time.After(30 * time.Second):
		t.Fatalf("firn serve did not start in 30 s:\n%s", logs.String())
	}
	return ""
}

// buildFirn builds firn from this tree (in the root module) and returns
// the binary's path.
func buildFirn(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "firn")
	build := exec.Command("go", "build", "-o", bin, "./cmd/firn")
	build.Dir = filepath.Join("..", "..") // the root module, with its own go.mod
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build firn: %v\n%s", err, out)
	}
	return bin
}

// freePort returns a loopback port nothing listens on: the kernel's
// choice, released at once.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// call sends one request to firn serve and returns its body, failing the
// test on an error status.
func call(t *testing.T, method, url, body string) []byte {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s = %d %s", method, url, resp.StatusCode, b)
	}
	return b
}

// load issues IDs of both modes until ctx ends: snowflake batches and the
// tags' segments.
func load(ctx context.Context, base string, tags ...string) *sync.WaitGroup {
	var wg sync.WaitGroup
	targets := []string{base + "/v1/snowflake/batch?count=100"}
	for _, tag := range tags {
		targets = append(targets, base+"/v1/segments/"+url.PathEscape(tag)+"/batch?count=10")
	}
	for _, target := range targets {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", target, nil)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	return &wg
}

// statusDoc is what the test compares of /v1/status.
type statusDoc struct {
	NowMS     int64 `json:"now_ms"`
	Ready     bool
	Snowflake struct {
		Node   uint64
		Layout string
		LastMS int64 `json:"last_ms"`
		TickMS int64 `json:"tick_ms"`
	}
	Lease *struct {
		LeaseID  string `json:"lease_id"`
		Renewals int64
	}
	Rate struct {
		PerSecond map[string][]uint64 `json:"per_second"`
	} `json:"rate"`
	Tags []struct {
		Tag            string
		InMemory       int64 `json:"in_memory"`
		ConfiguredStep int64 `json:"configured_step"`
		Step           int64
	}
}

// shown is what the page shows, read in one script run (the page renders
// between script runs, never during one).
type shown struct {
	Now           string
	Node, Layout  string
	Ready         string
	LeaseID       string
	Renewals      string
	RateSnowflake string `json:"rate_snowflake"`
	Tags          [][]string
	Images        int
	Points        string
	Zero          float64 // the y of the rate chart's 0 tick
}

const readShown = `(() => {
  const t = (id) => document.getElementById(id).textContent;
  return {
    now: document.body.dataset.now || "",
    node: t("node"), layout: t("layout"), ready: t("ready"),
    leaseid: t("lease-id"), renewals: t("lease-renewals"),
    rate_snowflake: t("rate-snowflake"),
    tags: [...document.querySelectorAll("#tags tbody tr")].map(tr => [...tr.cells].map(td => td.textContent)),
    images: document.querySelectorAll("img").length,
    points: document.getElementById("line-snowflake").getAttribute("points"),
    zero: +(document.querySelector("#chart .tick.y line") || { getAttribute: () => NaN }).getAttribute("y1"),
  };
})()`

// firstPaint waits for the page's first contentful paint and returns its
// time after navigation, in ms.
const firstPaint = `new Promise((done) => new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.name === "first-contentful-paint") done(e.startTime);
}).observe({type: "paint", buffered: true}))`

// TestStatusPage drives headless Chromium against firn serve under load.
func TestStatusPage(t *testing.T) {
	chromium := testenv.Tool(t, "chromium")
	base := firnServe(t)
	for _, tag := range []string{"order", xssTag} {
		body, _ := json.Marshal(map[string]any{"tag": tag, "step": 1000})
		call(t, "POST", base+"/v1/segments", string(body))
	}
	ctx := browser(t, chromium)

	rec := watch(ctx)

	// Load twice before the load starts: the first load starts the
	// browser's renderer, the second is what a person reloading the page
	// sees. The times are logged, not asserted (docs/performance.md).
	for _, load := range []string{"cold", "warm"} {
		var paint, rendered float64
		if err := chromedp.Run(ctx,
			network.Enable(), log.Enable(), runtime.Enable(),
			chromedp.Navigate(base+"/"),
			chromedp.WaitVisible("body[data-now]", chromedp.ByQuery),
			chromedp.Evaluate(firstPaint, &paint, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
			chromedp.Evaluate(`performance.getEntriesByName("firn-rendered")[0].startTime`, &rendered),
		); err != nil {
			t.Fatalf("load the page: %v", err)
		}
		t.Logf("%s load: first contentful paint %.0f ms, data rendered %.0f ms after navigation", load, paint, rendered)
	}
	// Everything below runs under load; the recorder keeps watching.
	for _, tag := range []string{"order", xssTag} {
		call(t, "GET", base+"/v1/segments/"+url.PathEscape(tag)+"/next", "")
	}
	loadCtx, stopLoad := context.WithCancel(context.Background())
	wg := load(loadCtx, base, "order", xssTag)
	defer wg.Wait()
	defer stopLoad()
	time.Sleep(2500 * time.Millisecond) // a refresh of the page under load

	// The figures shown are those of the /v1/status answer the page read.
	var first shown
	var doc statusDoc
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := chromedp.Run(ctx, chromedp.Evaluate(readShown, &first)); err != nil {
			t.Fatal(err)
		}
		now, _ := strconv.ParseInt(first.Now, 10, 64)
		body := rec.status(now)
		if body != nil {
			if err := json.Unmarshal(body, &doc); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no /v1/status answer captured for the render of %s", first.Now)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if first.Node != strconv.FormatUint(doc.Snowflake.Node, 10) || first.Layout != doc.Snowflake.Layout || first.Ready != map[bool]string{true: "ready", false: "not ready"}[doc.Ready] {
		t.Errorf("header shows node %q, layout %q, %q; /v1/status said %d, %q, ready %v", first.Node, first.Layout, first.Ready, doc.Snowflake.Node, doc.Snowflake.Layout, doc.Ready)
	}
	if doc.Lease == nil || first.LeaseID != doc.Lease.LeaseID || first.Renewals != strconv.FormatInt(doc.Lease.Renewals, 10) {
		t.Errorf("lease shown %q with %s renewals; /v1/status said %+v", first.LeaseID, first.Renewals, doc.Lease)
	}
	var last string
	if err := chromedp.Run(ctx, chromedp.Text("#last", &last, chromedp.ByID)); err != nil {
		t.Fatal(err)
	}
	if want := time.UnixMilli(doc.Snowflake.LastMS - doc.Snowflake.TickMS).UTC().Format("2006-01-02T15:04:05.000Z"); strings.Replace(want, ".000Z", "Z", 1) != last {
		t.Errorf("layout's end shown %q, want %s: the start of the last tick", last, want)
	}
	sf := doc.Rate.PerSecond["snowflake"]
	if first.RateSnowflake != digits.Group(sf[len(sf)-1]) {
		t.Errorf("IDs/s shown %q, /v1/status said %d", first.RateSnowflake, sf[len(sf)-1])
	}
	if len(first.Tags) != len(doc.Tags) || len(doc.Tags) != 2 {
		t.Fatalf("%d tag rows shown, /v1/status has %d tags, want 2", len(first.Tags), len(doc.Tags))
	}
	for _, tag := range doc.Tags {
		found := false
		for _, row := range first.Tags {
			if row[0] == tag.Tag {
				found = true
				if row[1] != digits.Group(uint64(tag.InMemory)) || row[2] != digits.Group(uint64(tag.ConfiguredStep)) || row[3] != digits.Group(uint64(tag.Step)) {
					t.Errorf("tag %q shows %s in memory, configured step %s, current step %s; /v1/status said %d, %d, %d",
						tag.Tag, row[1], row[2], row[3], tag.InMemory, tag.ConfiguredStep, tag.Step)
				}
				if tag.ConfiguredStep != 1000 {
					t.Errorf("tag %q: configured step %d, want the 1000 it was created with", tag.Tag, tag.ConfiguredStep)
				}
			}
		}
		if !found {
			t.Errorf("tag %q of /v1/status is not shown as text: rows %q", tag.Tag, first.Tags)
		}
	}
	// A tag named like markup is text: no element was made of it.
	if first.Images != 0 {
		t.Errorf("%d img elements on the page: the tag %q was inserted as HTML", first.Images, xssTag)
	}

	// The chart moves while load runs.
	var later shown
	if err := chromedp.Run(ctx, chromedp.Sleep(3*time.Second), chromedp.Evaluate(readShown, &later)); err != nil {
		t.Fatal(err)
	}
	if later.Now == first.Now || later.Points == first.Points {
		t.Errorf("the chart did not move in 3 s under load: %s then %s", first.Now, later.Now)
	}
	rises := false
	for _, p := range strings.Fields(later.Points) {
		_, y, _ := strings.Cut(p, ",")
		v, err := strconv.ParseFloat(y, 64)
		rises = rises || (err == nil && v < later.Zero)
	}
	if !rises {
		t.Errorf("the chart never rises above its 0 tick (y=%v) under load: %s", later.Zero, later.Points)
	}

	// The decode box decodes a known ID.
	var one struct{ ID string }
	if err := json.Unmarshal(call(t, "GET", base+"/v1/snowflake/next", ""), &one); err != nil {
		t.Fatal(err)
	}
	id, err := strconv.ParseUint(one.ID, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := snowflake.DefaultLayout().Decompose(id)
	if err != nil || doc.Snowflake.Layout != snowflake.DefaultLayout().String() {
		t.Fatalf("firn serve's layout %q, decompose: %v", doc.Snowflake.Layout, err)
	}
	var seq, when string
	if err := chromedp.Run(ctx,
		chromedp.SetValue("#decode-id", one.ID, chromedp.ByID),
		chromedp.Click(`#decode button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#decoded dd[data-part="sequence"]`, chromedp.ByQuery),
		chromedp.Text(`#decoded dd[data-part="sequence"]`, &seq, chromedp.ByQuery),
		chromedp.Text(`#decoded dd[data-part="time"]`, &when, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("decode box: %v", err)
	}
	if seq != strconv.FormatUint(parts.Sequence, 10) || when != parts.Time.UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("decode box shows sequence %s at %s; %d is sequence %d at %s", seq, when, id, parts.Sequence, parts.Time.UTC())
	}

	// A screenshot, as an artifact of the test.
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.ArtifactDir(), "status-page.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, p := range rec.problems {
		t.Errorf("browser: %s", p)
	}
	if rec.dialogs != 0 {
		t.Errorf("%d dialogs opened: script ran from data", rec.dialogs)
	}
	if len(rec.statuses) < 2 {
		t.Errorf("the page read /v1/status %d times in over 3 s, want it refreshing", len(rec.statuses))
	}
}

// recorder keeps what the browser reports: console errors and warnings,
// exceptions, failed or refused requests, dialogs, and the /v1/status
// answers the page read (by now_ms).
type recorder struct {
	mu         sync.Mutex
	problems   []string
	dialogs    int
	statusReqs map[network.RequestID]bool
	statuses   map[int64][]byte
}

func (r *recorder) problem(format string, args ...any) {
	r.mu.Lock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *recorder) status(nowMS int64) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statuses[nowMS]
}

// watch records the browser's events of ctx's tab.
func watch(ctx context.Context) *recorder {
	rec := &recorder{statusReqs: map[network.RequestID]bool{}, statuses: map[int64][]byte{}}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning || e.Type == runtime.APITypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				rec.problem("console %s: %s", e.Type, strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			rec.problem("exception: %s", e.ExceptionDetails.Error())
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError || e.Entry.Level == log.LevelWarning {
				rec.problem("log %s: %s %s", e.Entry.Level, e.Entry.Text, e.Entry.URL)
			}
		case *network.EventLoadingFailed:
			rec.problem("request failed: %s %s", e.ErrorText, e.BlockedReason)
		case *network.EventResponseReceived:
			if e.Response.Status >= 400 {
				rec.problem("%s answered %d", e.Response.URL, e.Response.Status)
			}
			if strings.HasSuffix(e.Response.URL, "/v1/status") && e.Response.Status == 200 {
				rec.mu.Lock()
				rec.statusReqs[e.RequestID] = true
				rec.mu.Unlock()
			}
		case *network.EventLoadingFinished:
			rec.mu.Lock()
			isStatus := rec.statusReqs[e.RequestID]
			rec.mu.Unlock()
			if isStatus {
				go rec.keep(ctx, e.RequestID)
			}
		case *page.EventJavascriptDialogOpening:
			rec.mu.Lock()
			rec.dialogs++
			rec.mu.Unlock()
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(false)) }()
		}
	})
	return rec
}

// keep reads the body of a /v1/status answer from the browser.
func (r *recorder) keep(ctx context.Context, id network.RequestID) {
	var body []byte
	err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		body, err = network.GetResponseBody(id).Do(ctx)
		return err
	}))
	var doc statusDoc
	if err == nil && json.Unmarshal(body, &doc) == nil {
		r.mu.Lock()
		r.statuses[doc.NowMS] = body
		r.mu.Unlock()
	}
}

// browser starts headless Chromium for one test, with a deadline.
func browser(t *testing.T, chromium string) context.Context {
	t.Helper()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(1200, 1500))...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	t.Cleanup(func() { cancel(); cancelTab(); cancelAlloc() })
	return ctx
}

// TestStatusPageTokenAndOpaque: with tokens configured the page asks for
// one, keeps it in sessionStorage and never in the URL, and in opaque mode
// the decode box shows the server's refusal.
func TestStatusPageTokenAndOpaque(t *testing.T) {
	chromium := testenv.Tool(t, "chromium")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "firn.yaml")
	const token = "status-token-0123456789"
	if err := os.WriteFile(cfg, []byte("auth:\n  tokens:\n    - name: page\n      secret: "+token+"\n      scopes: [status]\n"+
		"    - name: ids\n      secret: ids-token-0123456789\n      scopes: [snowflake]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "key")
	if err := os.WriteFile(key, []byte(strings.Repeat("0123456789abcdef", 4)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := firnServe(t, "--config", cfg, "--opaque", "--opaque-key-file", key)
	ctx := browser(t, chromium)
	rec := watch(ctx)
	var loginShown bool
	if err := chromedp.Run(ctx, network.Enable(), log.Enable(), runtime.Enable(),
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible("#login", chromedp.ByID),
		chromedp.Evaluate(`!document.getElementById("login").hidden`, &loginShown),
		chromedp.SendKeys("#token", token, chromedp.ByID),
		chromedp.Click(`#login button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible("body[data-now]", chromedp.ByQuery),
	); err != nil {
		t.Fatalf("log in: %v", err)
	}
	var stored, where, node string
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`sessionStorage.getItem("firn-status-token") || ""`, &stored),
		chromedp.Evaluate(`location.href`, &where),
		chromedp.Text("#node", &node, chromedp.ByID),
	); err != nil {
		t.Fatal(err)
	}
	if !loginShown || stored != token || strings.Contains(where, token) || node == "–" {
		t.Errorf("login shown %v, sessionStorage %q, URL %q, node %q: want the token kept in sessionStorage only, and data shown", loginShown, stored, where, node)
	}
	var legend string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector(".legend").innerText`, &legend)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(legend, "not shown in opaque mode") || strings.Contains(legend, "opaque mode/s") {
		t.Errorf("rate legend in opaque mode reads %q: want the snowflake rate left out, with no unit after the words", legend)
	}
	var refusal string
	if err := chromedp.Run(ctx,
		chromedp.SetValue("#decode-id", "12345", chromedp.ByID),
		chromedp.Click(`#decode button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#decode-error", chromedp.ByID),
		chromedp.Text("#decode-error", &refusal, chromedp.ByID),
	); err != nil {
		t.Fatalf("decode box: %v", err)
	}
	if !strings.Contains(refusal, "opaque") {
		t.Errorf("decode box in opaque mode shows %q, want the opaque_ids refusal", refusal)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	// The 401 before the token and the 400 of decoding are the point here;
	// anything else is not.
	for _, p := range rec.problems {
		if !regexp.MustCompile(`/v1/status answered 401|/v1/snowflake/decode/12345\?encoding=decimal answered 400|status of 40[01]`).MatchString(p) {
			t.Errorf("browser: %s", p)
		}
	}
	if rec.dialogs != 0 {
		t.Errorf("%d dialogs opened", rec.dialogs)
	}
}

// TestStatusPageWithoutJavaScript: with scripts off the page still draws
// its static parts (the headings, the sections) and says where the data
// is, with no error.
func TestStatusPageWithoutJavaScript(t *testing.T) {
	chromium := testenv.Tool(t, "chromium")
	base := firnServe(t)
	ctx := browser(t, chromium)
	rec := watch(ctx)
	var headings []string
	var noscript string
	if err := chromedp.Run(ctx, network.Enable(), log.Enable(),
		emulation.SetScriptExecutionDisabled(true),
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible("main", chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll("h1, h2")].filter(h => h.offsetParent !== null).map(h => h.textContent)`, &headings),
		chromedp.Text("noscript p", &noscript, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("load without scripts: %v", err)
	}
	want := []string{"firn", "Layout", "IDs per second", "Lease and HWM", "Segment tags", "Recent errors", "Decode an ID"}
	if strings.Join(headings, "|") != strings.Join(want, "|") || !strings.Contains(noscript, "/v1/status") {
		t.Errorf("without scripts: headings %q, noscript %q; want %q and a pointer to /v1/status", headings, noscript, want)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, p := range rec.problems {
		t.Errorf("browser: %s", p)
	}
}

// glance is what TestStatusPageAtAGlance measures of the page, in one
// script run (one render).
type glance struct {
	Width, ScrollWidth int
	Scrollers          []string // elements that scroll sideways
	YTicks             []struct {
		Label string
		Y     float64
	} `json:"y_ticks"`
	XTicks    []string `json:"x_ticks"`
	TimeTicks []string `json:"time_ticks"`
	Points    []string
	Peak      string
	EndLabel  string `json:"end_label"`
	PerSecond string `json:"per_second"`
	Nodes     string
	Header    []struct {
		Text          string
		Top, Bottom   float64
		Right         float64
		Lines         int     // lines of its longest part (dt, dd or h1)
		HeaderRight   float64 `json:"header_right"`
		HeaderVisible bool    `json:"header_visible"`
	}
	Broken []string // words cut across lines
}

const measure = `(() => {
  const lines = (node) => {
    const r = document.createRange();
    r.selectNodeContents(node);
    const rs = [...r.getClientRects()].filter((b) => b.width > 0);
    if (!rs.length) return 0;
    const h = Math.min(...rs.map((b) => b.height));
    const tops = rs.map((b) => b.top).sort((a, b) => a - b);
    let n = 1;
    for (let i = 1; i < tops.length; i++) if (tops[i] - tops[i - 1] > h / 2) n++;
    return n;
  };
  // A word runs up to its trailing separators (space - _ . : /), where a
  // line may break; a word whose text lies on two lines was cut inside.
  const broken = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (n.parentElement.closest("svg, select, script, noscript, [hidden]")) continue;
    const re = /[^\s\-_.:\/]+[\-_.:\/]*/g;
    let m;
    while ((m = re.exec(n.data))) {
      range.setStart(n, m.index);
      range.setEnd(n, m.index + m[0].length);
      const rs = [...range.getClientRects()].filter((b) => b.width > 0);
      if (rs.length < 2) continue;
      const h = Math.min(...rs.map((b) => b.height));
      const tops = rs.map((b) => b.top);
      if (Math.max(...tops) - Math.min(...tops) > h / 2) broken.push(m[0]);
    }
  }
  const scrollers = [...document.querySelectorAll("body *")].filter((e) => {
    const o = getComputedStyle(e).overflowX;
    return (o === "auto" || o === "scroll") && e.scrollWidth > e.clientWidth;
  }).map((e) => e.tagName + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className : "") + " " + e.scrollWidth + ">" + e.clientWidth);
  const hb = document.querySelector("header").getBoundingClientRect();
  const header = [document.querySelector("header h1"), ...document.querySelectorAll("header .facts > div")].map((e) => {
    const b = e.getBoundingClientRect();
    const parts = e.tagName === "H1" ? [e] : [...e.children];
    return { text: e.textContent, top: b.top, bottom: b.bottom, right: b.right, lines: Math.max(...parts.map(lines)),
      header_right: hb.right, header_visible: b.width > 0 };
  });
  const last = document.getElementById("last");
  return {
    width: innerWidth, scrollwidth: document.documentElement.scrollWidth, scrollers,
    y_ticks: [...document.querySelectorAll("#chart .tick.y")].map((g) => ({ label: g.querySelector("text").textContent, y: +g.querySelector("line").getAttribute("y1") })),
    x_ticks: [...document.querySelectorAll("#chart .tick.x text")].map((t) => t.textContent),
    time_ticks: [...document.querySelectorAll("#timeline .tick.x text")].map((t) => t.textContent),
    points: [...document.querySelectorAll("#chart polyline")].map((p) => p.getAttribute("points")),
    peak: document.getElementById("rate-peak").textContent,
    end_label: last.previousElementSibling.textContent,
    per_second: document.getElementById("per-second").textContent,
    nodes: document.getElementById("nodes").textContent,
    header, broken,
  };
})()`

// TestStatusPageAtAGlance: at 390 and 1280 px, under load, both charts
// have a scale (the rate chart's y ticks say the values its line is drawn
// at; x ticks are clock times, the time line's are seconds from now),
// counts carry the CLI's separators, the layout's end says so, the
// header's items stay whole, nothing scrolls sideways and no word is cut
// across lines — with realistic tag names, a long one, one without a
// separator and one made of markup.
func TestStatusPageAtAGlance(t *testing.T) {
	chromium := testenv.Tool(t, "chromium")
	base := firnServe(t)
	tags := []string{"order", "user", "payment-refunds.eu-west-1.settlement", strings.Repeat("inventoryreservation", 5), xssTag}
	for _, tag := range tags {
		body, _ := json.Marshal(map[string]any{"tag": tag, "step": 1000})
		call(t, "POST", base+"/v1/segments", string(body))
		call(t, "GET", base+"/v1/segments/"+url.PathEscape(tag)+"/next", "")
	}
	loadCtx, stopLoad := context.WithCancel(context.Background())
	wg := load(loadCtx, base, tags...)
	defer wg.Wait()
	defer stopLoad()

	ctx := browser(t, chromium)
	rec := watch(ctx)
	if err := chromedp.Run(ctx, network.Enable(), log.Enable(), runtime.Enable(),
		chromedp.Navigate(base+"/"), chromedp.WaitVisible("body[data-now]", chromedp.ByQuery)); err != nil {
		t.Fatalf("load the page: %v", err)
	}

	// The page's grouping is the CLI's on the same inputs.
	inputs := []uint64{0, 1, 12, 123, 999, 1000, 1001, 9999, 10000, 65536, 999999, 1000000, 4096000, 123456789, 1<<53 - 1, 1 << 53}
	arg, _ := json.Marshal(inputs)
	var page []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(string(arg)+".map(firnGroup)", &page)); err != nil || len(page) != len(inputs) {
		t.Errorf("the page's firnGroup on %d inputs: %q, %v", len(inputs), page, err)
	} else {
		for i, n := range inputs {
			if page[i] != digits.Group(n) {
				t.Errorf("the page writes %d as %q, the CLI as %q", n, page[i], digits.Group(n))
			}
		}
	}

	clock := regexp.MustCompile(`^\d\d:\d\d(:\d\d)?$`)
	fromNow := regexp.MustCompile(`^(now|[+−]\d+ (s|min|h))$`)
	for _, width := range []int{390, 1280} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			var before string
			var g glance
			// A fresh render at this width: the page redraws on resize and
			// on its next read of /v1/status.
			if err := chromedp.Run(ctx,
				chromedp.EmulateViewport(int64(width), 1000),
				chromedp.Evaluate(`document.body.dataset.now`, &before),
				chromedp.Poll(`document.body.dataset.now !== `+strconv.Quote(before), nil),
				// The chart counts whole seconds: on a quick start the first
				// renders come before one second of load has ended.
				chromedp.Poll(`document.getElementById("rate-peak").textContent !== "0"`, nil),
				chromedp.Evaluate(measure, &g),
			); err != nil {
				t.Fatal(err)
			}
			if g.Width != width {
				t.Fatalf("viewport %d px wide, want %d", g.Width, width)
			}

			// The y scale: numbered ticks rising from 0, and the line's
			// highest point is drawn where the scale puts the peak.
			if len(g.YTicks) < 2 || g.YTicks[0].Label != "0" {
				t.Errorf("y ticks %+v: want at least two, from 0", g.YTicks)
			} else {
				checkScale(t, g)
			}

			// Time ticks.
			if len(g.XTicks) < 2 {
				t.Errorf("rate chart x ticks %q: want at least two", g.XTicks)
			}
			for i, l := range g.XTicks {
				if !clock.MatchString(l) || (i > 0 && l <= g.XTicks[i-1]) {
					t.Errorf("rate chart x ticks %q: want rising clock times", g.XTicks)
					break
				}
			}
			if len(g.TimeTicks) < 2 || !slices.Contains(g.TimeTicks, "now") {
				t.Errorf("time line ticks %q: want at least two, one of them now", g.TimeTicks)
			}
			for _, l := range g.TimeTicks {
				if !fromNow.MatchString(l) {
					t.Errorf("time line tick %q is not a time from now", l)
				}
			}

			// Counts with separators; the layout's end named as such.
			if g.PerSecond != "4,096,000" || g.Nodes != "1,024" {
				t.Errorf("layout shows %q IDs/s per node and %q nodes, want 4,096,000 and 1,024 as the CLI prints them", g.PerSecond, g.Nodes)
			}
			if g.EndLabel != "layout ends" {
				t.Errorf("the layout's last tick is labelled %q, want \"layout ends\"", g.EndLabel)
			}

			// The header: every item whole (each part on one line, inside
			// the header); at 1280 px all on one line.
			rows := 0
			bottom := math.Inf(-1)
			for _, it := range g.Header {
				if !it.HeaderVisible {
					continue
				}
				if it.Lines != 1 || it.Right > it.HeaderRight+0.5 {
					t.Errorf("header item %q is cut: %d lines, right edge %.0f of %.0f", it.Text, it.Lines, it.Right, it.HeaderRight)
				}
				if it.Top >= bottom {
					rows++
				}
				bottom = math.Max(bottom, it.Bottom)
			}
			if width == 1280 && rows != 1 {
				t.Errorf("at 1280 px the header's items take %d lines, want 1: %+v", rows, g.Header)
			}

			// Nothing scrolls sideways, no word is cut.
			if g.ScrollWidth > g.Width || len(g.Scrollers) > 0 {
				t.Errorf("the page is %d px wide in a %d px window; elements that scroll sideways: %q", g.ScrollWidth, g.Width, g.Scrollers)
			}
			if len(g.Broken) > 0 {
				t.Errorf("words cut across lines: %q", g.Broken)
			}

		})
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, p := range rec.problems {
		t.Errorf("browser: %s", p)
	}
	if rec.dialogs != 0 {
		t.Errorf("%d dialogs opened: script ran from data", rec.dialogs)
	}
}

// checkScale: the rate chart's y ticks are counts with the CLI's
// separators, rising from 0, and its line's highest point is drawn where
// they put the peak shown in the legend.
func checkScale(t *testing.T, g glance) {
	t.Helper()
	number := regexp.MustCompile(`^\d{1,3}(,\d{3})*$`)
	vals := make([]float64, len(g.YTicks))
	for i, tk := range g.YTicks {
		if !number.MatchString(tk.Label) {
			t.Errorf("y tick %q is not a count with the CLI's separators", tk.Label)
		}
		vals[i], _ = strconv.ParseFloat(strings.ReplaceAll(tk.Label, ",", ""), 64)
		if i > 0 && (vals[i] <= vals[i-1] || tk.Y >= g.YTicks[i-1].Y) {
			t.Errorf("y ticks %+v do not rise with their values", g.YTicks)
		}
	}
	peak, err := strconv.ParseFloat(strings.ReplaceAll(g.Peak, ",", ""), 64)
	if err != nil || !number.MatchString(g.Peak) || peak == 0 {
		t.Errorf("peak shown %q: want a count above 0 under load, with separators", g.Peak)
		return
	}
	top := math.Inf(1)
	for _, pts := range g.Points {
		for _, p := range strings.Fields(pts) {
			if _, y, ok := strings.Cut(p, ","); ok {
				v, _ := strconv.ParseFloat(y, 64)
				top = math.Min(top, v)
			}
		}
	}
	y0, y1 := g.YTicks[0].Y, g.YTicks[len(vals)-1].Y
	if want := y0 + (y1-y0)*peak/vals[len(vals)-1]; math.Abs(top-want) > 0.5 {
		t.Errorf("the highest point is drawn at y=%.1f; the scale (%+v) puts the peak %s at %.1f", top, g.YTicks, g.Peak, want)
	}
	if peak > vals[len(vals)-1] {
		t.Errorf("peak %s above the top tick %+v", g.Peak, g.YTicks)
	}
}

// TestStatusPageWhileStarting: while firn serve waits for an etcd that
// refuses connections, its page is served and shows that it is starting,
// why (the refusal), the store and how long it has waited; the sections
// of a serving node are hidden.
func TestStatusPageWhileStarting(t *testing.T) {
	chromium := testenv.Tool(t, "chromium")
	bin := buildFirn(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	etcd := fmt.Sprintf("http://127.0.0.1:%d", freePort(t)) // nothing listens: refused
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", "--store", "etcd", "--endpoints", etcd, "--namespace", "/firn/browser/",
		"--http", strings.TrimPrefix(base, "http://"), "--grpc", "off", "--log-format", "json")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("firn serve logs:\n%s", logs.String())
		}
	})
	bctx := browser(t, chromium)
	rec := watch(bctx)
	var got struct {
		Ready, Reason, Store, Wait string
		Headings                   []string
	}
	if err := chromedp.Run(bctx, network.Enable(), log.Enable(),
		chromedp.ActionFunc(func(context.Context) error {
			// The port is bound a moment after the process starts.
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if resp, err := http.Get(base + "/healthz"); err == nil {
					resp.Body.Close()
					return nil
				} else if time.Now().After(deadline) {
					return err
				}
			}
		}),
		chromedp.Navigate(base+"/"),
		chromedp.Poll(`document.getElementById("not-ready").textContent.includes("connection refused")`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate(`({ready: document.getElementById("ready").textContent,
			reason: document.getElementById("not-ready").textContent,
			store: document.getElementById("starting-store").textContent,
			wait: document.getElementById("starting-wait").textContent,
			headings: [...document.querySelectorAll("main h2")].filter(h => h.offsetParent !== null).map(h => h.textContent)})`, &got),
	); err != nil {
		t.Fatalf("the page while starting: %v", err)
	}
	if got.Ready != "starting" || !strings.Contains(got.Reason, etcd) || got.Store != `etcd namespace "/firn/browser/"` ||
		!strings.HasSuffix(got.Wait, " s") && !strings.HasSuffix(got.Wait, " ms") || strings.Join(got.Headings, "|") != "Starting" {
		t.Errorf("the page while starting shows %+v; want starting, the refusal of %s, the store, the wait, and the Starting section alone", got, etcd)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, p := range rec.problems {
		t.Errorf("browser: %s", p)
	}
}
