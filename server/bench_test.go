package server_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// BenchmarkHandler compares the handler of one snowflake ID, with a token
// and metrics, with a trivial handler returning a counter.
func BenchmarkHandler(b *testing.B) {
	var n atomic.Int64
	trivial := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"id":"` + strconv.FormatInt(n.Add(1), 10) + `"}` + "\n"))
	})
	g, _ := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved()})
	auth, _ := server.NewAuth([]server.Token{{Name: "b", Secret: "s", Scopes: []string{"snowflake"}}})
	firn := server.NewHTTP(&server.Service{Snowflake: g, Auth: auth})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"trivial", trivial}, {"firn", firn}} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/v1/snowflake/next", nil)
			r.Header.Set("Authorization", "Bearer s")
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				c.h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatal(w.Code)
				}
			}
		})
	}
}
