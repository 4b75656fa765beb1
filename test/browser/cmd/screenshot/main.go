// Command screenshot makes docs/status-page.png (make screenshot): it
// builds firn from this tree, runs firn serve with a data directory of
// its own, creates a few ordinary tags, issues IDs of both modes for a
// while at changing rates, and has headless Chromium photograph the
// status page.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
)

// tags are the segment tags of the picture, with the IDs per request each
// asks for.
var tags = []struct {
	name  string
	batch int
}{{"order", 20}, {"user", 5}, {"payment", 10}, {"invoice", 8}, {"session", 40}}

func main() {
	out := flag.String("out", "docs/status-page.png", "the PNG to write")
	root := flag.String("root", ".", "the firn checkout to build")
	width := flag.Int("width", 1280, "the browser window's width, in CSS pixels")
	load := flag.Duration("load", time.Minute, "how long to issue IDs before the picture")
	flag.Parse()
	if err := run(*out, *root, *width, *load); err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(1)
	}
}

func run(out, root string, width int, load time.Duration) error {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		return fmt.Errorf("%w (make services installs it)", err)
	}
	dir, err := os.MkdirTemp("", "firn-screenshot-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin := filepath.Join(dir, "firn")
	build := exec.Command("go", "build", "-o", bin, "./cmd/firn")
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, b)
	}
	base, stop, err := serve(bin, filepath.Join(dir, "data"))
	if err != nil {
		return err
	}
	defer stop()
	for _, tag := range tags {
		body, _ := json.Marshal(map[string]any{"tag": tag.name, "step": 1000})
		if err := post(base+"/v1/segments", string(body)); err != nil {
			return err
		}
	}
	fmt.Printf("issuing IDs for %s at %s\n", load, base)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { issue(ctx, base); close(done) }()
	defer func() { cancel(); <-done }()
	time.Sleep(load) // the load goes on while the picture is taken

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.UserDataDir(filepath.Join(dir, "chromium")),
		chromedp.Flag("disable-quic", true), chromedp.WindowSize(width, 1000))...)
	defer cancelAlloc()
	bctx, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()
	bctx, cancelRun := context.WithTimeout(bctx, time.Minute)
	defer cancelRun()
	var png []byte
	if err := chromedp.Run(bctx,
		chromedp.EmulateViewport(int64(width), 1000),
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible("body[data-now]", chromedp.ByQuery),
		chromedp.FullScreenshot(&png, 100),
	); err != nil {
		return fmt.Errorf("chromium: %w", err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s (%d bytes)\n", out, len(png))
	return nil
}

// serve starts firn serve on a loopback port and returns its URL and a
// func that stops it.
func serve(bin, data string) (string, func(), error) {
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--grpc", "off", "--data-dir", data, "--log-format", "json")
	// Node IDs of its own, beside any firn the user runs.
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(filepath.Dir(data), "state"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	var logs strings.Builder
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
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
		if ok {
			return base, stop, nil
		}
	case <-time.After(30 * time.Second):
	}
	stop()
	return "", nil, fmt.Errorf("firn serve did not start:\n%s", logs.String())
}

// issue asks for IDs until ctx ends: snowflake batches and each tag's,
// at rates that rise and fall so the chart has a shape.
func issue(ctx context.Context, base string) {
	start := time.Now()
	var wg sync.WaitGroup
	targets := []string{base + "/v1/snowflake/batch?count=50"}
	for _, tag := range tags {
		targets = append(targets, fmt.Sprintf("%s/v1/segments/%s/batch?count=%d", base, tag.name, tag.batch))
	}
	for i, target := range targets {
		wg.Go(func() {
			for ctx.Err() == nil {
				phase := time.Since(start).Seconds()/20 + float64(i)
				pause := time.Duration(4+3*math.Sin(phase)) * time.Millisecond
				req, _ := http.NewRequestWithContext(ctx, "GET", target, nil)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				time.Sleep(pause)
			}
		})
	}
	wg.Wait()
}

func post(url, body string) error {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(resp.Body)
		return errors.New(resp.Status + " " + string(b))
	}
	return nil
}
