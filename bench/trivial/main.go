// Command trivial is the baseline of the HTTP bar in docs/performance.md: a
// net/http handler that returns a counter, as cheap as an HTTP ID service
// can be. bench/serve.sh runs it beside `firn serve` under the same load.
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
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Content-Type"] = []string{"text/plain; charset=utf-8"}
		_, _ = w.Write(strconv.AppendInt(nil, n.Add(1), 10))
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}
