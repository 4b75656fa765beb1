// Command trivial is the baseline of the HTTP bar in docs/performance.md:
// what a user would write instead of firn's routes, a counter behind
// http.ServeMux on the same patterns, reading the same path value.
// bench/serve.sh runs it beside `firn serve` under the same load.
package main

import (
	"flag"
	"log"
	"net/http"
	"strconv"
	"sync/atomic"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	flag.Parse()
	var n atomic.Int64
	// next answers with the counter; a pattern with a wildcard has its
	// value read, as a handler of that route would.
	next := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if name != "" && r.PathValue(name) == "" {
				http.NotFound(w, r)
				return
			}
			w.Header()["Content-Type"] = []string{"text/plain; charset=utf-8"}
			_, _ = w.Write(strconv.AppendInt(nil, n.Add(1), 10))
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/snowflake/next", next(""))
	mux.Handle("GET /v1/segments/{tag}/next", next("tag"))
	mux.Handle("GET /api/snowflake/get/{key}", next("key"))
	mux.Handle("GET /api/segment/get/{key}", next("key"))
	mux.Handle("GET /tinyid/id/nextId", next(""))
	mux.Handle("GET /tinyid/id/nextIdSimple", next(""))
	log.Fatal(http.ListenAndServe(*addr, mux))
}
