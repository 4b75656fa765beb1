package client_test

import (
	"context"
	"fmt"
	"net"

	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// startServer serves gRPC on a loopback port, in process, as `firn serve`
// would: snowflake IDs, and the tag "order" counting from 1.
func startServer() (addr string, stop func()) {
	g, err := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved()})
	if err != nil {
		panic(err)
	}
	store := segmenttest.NewMemStore()
	if err := store.CreateTag(context.Background(), "order", 1, 100, ""); err != nil {
		panic(err)
	}
	alloc, err := segment.NewAllocator(store, segment.Config{})
	if err != nil {
		panic(err)
	}
	s, err := server.New(server.Config{Snowflake: g, Segments: alloc, SegmentStore: store})
	if err != nil {
		panic(err)
	}
	srv := s.GRPC()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), func() { srv.Stop(); _ = alloc.Close(context.Background()) }
}

func Example() {
	addr, stop := startServer()
	defer stop()
	ctx := context.Background()

	c, err := client.New(client.Config{Endpoints: []string{addr}})
	if err != nil {
		panic(err)
	}
	defer c.Close(ctx)
	id, err := c.Tag("order").Next(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(id)
	// Output: 1
}

func ExampleClient_Next() {
	addr, stop := startServer()
	defer stop()
	ctx := context.Background()

	c, err := client.New(client.Config{Endpoints: []string{addr}})
	if err != nil {
		panic(err)
	}
	defer c.Close(ctx)
	id, err := c.Next(ctx)
	if err != nil {
		panic(err)
	}
	parts, err := c.Decompose(uint64(id))
	if err != nil {
		panic(err)
	}
	fmt.Println(parts.Fields[0].Name, parts.Fields[0].Value)
	// Output: node 0
}

func ExampleTag_NextN() {
	addr, stop := startServer()
	defer stop()
	ctx := context.Background()

	c, err := client.New(client.Config{Endpoints: []string{addr}})
	if err != nil {
		panic(err)
	}
	defer c.Close(ctx)
	ids := make([]int64, 5)
	n, err := c.Tag("order").NextN(ctx, ids)
	if err != nil {
		panic(err)
	}
	fmt.Println(ids[:n])
	// Output: [1 2 3 4 5]
}

// A text answer whose last line has no newline was cut short: its last
// "ID" may be the prefix of one, a number the server never issued.
func ExampleAppendText() {
	ids, err := client.AppendText(nil, []byte("7205759403792793600\n7205759403792793601\n"), 2)
	fmt.Println(ids, err)
	ids, err = client.AppendText(nil, []byte("7205759403792793600\n72057"), 2)
	fmt.Println(ids, err)
	// Output:
	// [7205759403792793600 7205759403792793601] <nil>
	// [] client: no firn server could serve: bad_answer: the answer does not end with a newline: cut short
}
