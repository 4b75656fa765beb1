package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"os"

	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// startHTTPServer serves the HTTP API in process, as `firn serve` would:
// snowflake IDs, and the tag "order" counting from 1.
func startHTTPServer() (base string, stop func()) {
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
	hs := httptest.NewServer(s.Handler())
	return hs.URL, func() { hs.Close(); _ = alloc.Close(context.Background()) }
}

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

// Segment administration, and IDs asked of the server for the call.
func ExampleClient_CreateTag() {
	base, stop := startHTTPServer()
	defer stop()
	ctx := context.Background()

	c, err := client.New(client.Config{Endpoints: []string{base}, HTTP: true})
	if err != nil {
		panic(err)
	}
	defer c.Close(ctx)
	tag, err := c.CreateTag(ctx, "invoice", 1000, 50, "invoice numbers")
	if err != nil {
		panic(err)
	}
	fmt.Println(tag.Tag, tag.Next, tag.Step)
	if _, err := c.CreateTag(ctx, "invoice", 1, 1, ""); errors.Is(err, client.ErrTagExists) {
		fmt.Println("exists")
	}
	ids := make([]int64, 3)
	if _, err := c.Tag("invoice").Fetch(ctx, ids); err != nil {
		panic(err)
	}
	fmt.Println(ids)
	// Output:
	// invoice 1000 50
	// exists
	// [1000 1001 1002]
}

// A server's layout and batch limit, and an ID taken apart by the server.
func ExampleClient_Info() {
	base, stop := startHTTPServer()
	defer stop()
	ctx := context.Background()

	c, err := client.New(client.Config{Endpoints: []string{base}, HTTP: true})
	if err != nil {
		panic(err)
	}
	defer c.Close(ctx)
	info, err := c.Info(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(info.Node, info.MaxBatch, info.Fingerprint == snowflake.DefaultLayout().Fingerprint())
	d, err := c.Decode(ctx, 175928847299117063)
	if err != nil {
		panic(err)
	}
	node, _ := d.Node.Get("node")
	fmt.Println(d.Time, node, d.Sequence)
	// Output:
	// 0 10000 true
	// 2027-05-01T11:18:25.796Z 32 7
}

// WriteLines writes a tag's IDs one a line, two a request here, only
// whole answers reaching the writer.
func ExampleClient_WriteLines() {
	addr, stop := startServer()
	defer stop()
	ctx := context.Background()

	c, err := client.New(client.Config{Endpoints: []string{addr}})
	if err != nil {
		panic(err)
	}
	defer c.Close(ctx)
	if err := c.WriteLines(ctx, os.Stdout, "snowflake", "order", 5, 2, idtext.Decimal); err != nil {
		panic(err)
	}
	// Output:
	// 1
	// 2
	// 3
	// 4
	// 5
}
