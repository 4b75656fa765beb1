package browser_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	bin := filepath.Join(t.TempDir(), "firn")
	build := exec.Command("go", "build", "-o", bin, "./cmd/firn")
	build.Dir = filepath.Join("..", "..") // the root module, with its own go.mod
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build firn: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--http", "127.0.0.1:0", "--grpc", "off",
		"--data-dir", filepath.Join(t.TempDir(), "data"), "--log-format", "json"}, args...)...)
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
		Tag  string
		Left int64
		Step int64
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
		t.Errorf("last ID time shown %q, want %s: the start of the last tick", last, want)
	}
	sf := doc.Rate.PerSecond["snowflake"]
	if first.RateSnowflake != strconv.FormatUint(sf[len(sf)-1], 10) {
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
				if row[1] != strconv.FormatInt(tag.Left, 10) || row[3] != strconv.FormatInt(tag.Step, 10) {
					t.Errorf("tag %q shows left %s, step %s; /v1/status said %d, %d", tag.Tag, row[1], row[3], tag.Left, tag.Step)
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
	if !regexp.MustCompile(`,(1[0-4]\d|\d{1,2})\.\d`).MatchString(later.Points) {
		t.Errorf("the chart never rises above its baseline under load: %s", later.Points)
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
