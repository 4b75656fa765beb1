package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/bench"
)

var benchUsage = `Usage: firn bench [--protocol P] [--mode M] [--tag T] [--batch N]
                  [--workers N | --rate R] [--duration D] [--count N]
                  [--tls] [--ca FILE | --insecure] [--json]

Loads a firn server (or anything speaking Leaf's or Tinyid's HTTP routes)
and reports throughput, a latency histogram, errors, and whether every ID
received was unique. Closed loop by default (--workers callers, each
sending its next request when the last one is answered); open loop with
--rate, where worker i of W sends requests i, i+W, i+2W… of a fixed-rate
schedule whatever the answers do: a request due while its worker still
waits on an answer counts its latency from when it was due (no coordinated
omission); the timer's own lateness, up to a millisecond, is not counted.
A worker whose request failed waits before its next one, 1 ms doubling to
100 ms while failures continue (in open loop, until the later of that and
its next due time), so a server that is down is not flooded.
Over plain HTTP each worker holds one raw keep-alive connection, cheap
enough that the generator leaves the CPU to the server. A progress bar with
the current rate is drawn on standard error when it is a terminal.

  --target ADDR      the server: host:port of its gRPC listener (default
                     127.0.0.1:9090), or a base URL for HTTP, Leaf and
                     Tinyid (default http://127.0.0.1:8080; https:// for
                     TLS); several, comma-separated, for --protocol client
  --protocol P       grpc (default, unary calls), stream (gRPC server
                     streams, one per worker; a request is one message),
                     http (/v1), client (the Go SDK over gRPC, buffering),
                     leaf (/api/…/get/{key}) or tinyid
                     (/tinyid/id/nextIdSimple)
  --mode M           snowflake or segment (default: snowflake; segment
                     with --tag or --protocol tinyid)
  --tag T            the tag of segment mode (Leaf's key, Tinyid's bizType)
  --batch N          IDs per request, 1 to 100000 (default 1); leaf: 1 only
  --workers N        concurrent callers, 1 to 10000, each with its own
                     connection over HTTP (default 8; with --rate, 64)
  --rate R           requests per second, open loop, 0.001 to 10000000
                     (default: closed loop)
  --duration D       how long to run, more than 0 (default 10s)
  --count N          stop after N requests, 1 or more (default: no limit)
  --token T          bearer token (Tinyid: its token parameter)
  --tls              gRPC over TLS (the system's roots); over HTTP, TLS
                     comes with an https:// target
  --ca FILE          trust the PEM certificates in FILE instead of the
                     system's roots (implies --tls for gRPC)
  --insecure         do not verify the server's certificate (implies --tls
                     for gRPC); a warning is printed, and the report says so
  --json             print the result as JSON
  --no-check         skip the uniqueness check (keeps no IDs in memory)

Exit status: 0 when at least one ID arrived, no request failed and every
ID was unique (or --no-check); 1 when an ID was received twice, any
request failed (the count and the first error are printed) or no ID
arrived (with --protocol client, still retrying when the run ended: the
last server failure is printed) — the report's verdict line and --json's
"failures" say which; 2 for bad input.
`

func runBench(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var cfg bench.Config
	fs.StringVar(&cfg.Target, "target", "", "")
	fs.StringVar(&cfg.Protocol, "protocol", "grpc", "")
	mode := fs.String("mode", "snowflake", "")
	fs.StringVar(&cfg.Tag, "tag", "", "")
	fs.IntVar(&cfg.Batch, "batch", 1, "")
	workers := fs.Int("workers", 0, "")
	rate := fs.Float64("rate", 0, "")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "")
	count := fs.Int64("count", 0, "")
	fs.StringVar(&cfg.Token, "token", "", "")
	fs.BoolVar(&cfg.TLS, "tls", false, "")
	fs.StringVar(&cfg.CA, "ca", "", "")
	fs.BoolVar(&cfg.Insecure, "insecure", false, "")
	asJSON := fs.Bool("json", false, "")
	fs.BoolVar(&cfg.NoCheck, "no-check", false, "")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return extraArg("bench", rest[0])
	}
	// A flag given is passed on even as 0, which bench refuses rather
	// than taking for the default.
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "mode":
			cfg.Mode = mode
		case "workers":
			cfg.Workers = workers
		case "rate":
			cfg.Rate = rate
		case "count":
			cfg.Count = count
		}
	})
	if err := cfg.Validate(); err != nil {
		return benchError(err)
	}
	if cfg.Insecure {
		fmt.Fprintln(logOutput, "firn bench: WARNING: --insecure: the server's certificate is NOT verified; anyone on the path can answer in its name")
	}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 && !*asJSON {
		cfg.Progress = os.Stderr
	}
	res, err := bench.Run(context.Background(), cfg)
	if err != nil {
		return benchError(err)
	}
	if *asJSON {
		if err := res.WriteJSON(stdout); err != nil {
			return err
		}
	} else {
		res.Print(stdout)
	}
	return res.Err()
}

// benchError makes bench's refusal of its configuration bad input (exit
// 2), worded as the flag at fault, whichever command gave it.
func benchError(err error) error {
	var ce *bench.ConfigError
	if errors.As(err, &ce) {
		return usagef("%s", ce.Reason)
	}
	return err
}

// loadTLS is bench's loader of --ca files, which firn next and firn tag
// use too; its refusals are bad input.
func loadTLS(ca string, insecure bool) (*tls.Config, error) {
	conf, err := bench.LoadTLS(ca, insecure)
	if err != nil {
		return nil, benchError(err)
	}
	return conf, nil
}
