package bench

import (
	"context"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/firnpb"
)

// caller sends one request and returns the IDs it got, appended to dst.
type caller func(ctx context.Context, dst []int64) ([]int64, error)

// newCaller returns the request of cfg and a function closing what it
// opened.
func newCaller(cfg *settings) (func() caller, func(), error) {
	one := func(c caller, close func(), err error) (func() caller, func(), error) {
		return func() caller { return c }, close, err
	}
	switch cfg.protocol {
	case "grpc":
		return one(grpcCaller(cfg))
	case "stream":
		return streamCaller(cfg)
	case "client":
		return one(clientCaller(cfg))
	default:
		return httpCaller(cfg), func() {}, nil
	}
}

// streamCaller gives each worker its own server stream (firnpb Stream);
// one request is one message received.
func streamCaller(cfg *settings) (func() caller, func(), error) {
	conn, c, auth, err := dialFirn(cfg)
	if err != nil {
		return nil, nil, err
	}
	return func() caller {
		var stream firnpb.Firn_StreamClient
		return func(ctx context.Context, dst []int64) ([]int64, error) {
			if stream == nil {
				s, err := c.Stream(auth(ctx), &firnpb.StreamRequest{Tag: cfg.tag, Batch: int32(cfg.batch)})
				if err != nil {
					return dst, err
				}
				stream = s
			}
			m, err := stream.Recv()
			if err != nil {
				stream = nil
				return dst, err
			}
			return append(dst, m.Ids...), nil
		}
	}, func() { _ = conn.Close() }, nil
}

// dialFirn dials the gRPC target and returns a function adding the token.
func dialFirn(cfg *settings) (*grpc.ClientConn, firnpb.FirnClient, func(context.Context) context.Context, error) {
	creds := insecure.NewCredentials()
	if cfg.tlsConf != nil {
		creds = credentials.NewTLS(cfg.tlsConf)
	}
	conn, err := grpc.Dial(cfg.targets[0], grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, nil, nil, err
	}
	auth := func(ctx context.Context) context.Context { return ctx }
	if cfg.token != "" {
		auth = func(ctx context.Context) context.Context {
			return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+cfg.token)
		}
	}
	return conn, firnpb.NewFirnClient(conn), auth, nil
}

func grpcCaller(cfg *settings) (caller, func(), error) {
	conn, c, auth, err := dialFirn(cfg)
	if err != nil {
		return nil, nil, err
	}
	n := int32(cfg.batch)
	one := func(r *firnpb.NextResponse, err error) ([]int64, error) {
		if err != nil {
			return nil, err
		}
		return []int64{r.Id}, nil
	}
	many := func(r *firnpb.BatchResponse, err error) ([]int64, error) {
		if err != nil {
			return nil, err
		}
		return r.Ids, nil
	}
	var call func(ctx context.Context) ([]int64, error)
	switch {
	case cfg.mode == "snowflake" && n == 1:
		call = func(ctx context.Context) ([]int64, error) { return one(c.Next(auth(ctx), &firnpb.NextRequest{})) }
	case cfg.mode == "snowflake":
		call = func(ctx context.Context) ([]int64, error) {
			return many(c.Batch(auth(ctx), &firnpb.BatchRequest{Count: n}))
		}
	case n == 1:
		call = func(ctx context.Context) ([]int64, error) {
			return one(c.SegmentNext(auth(ctx), &firnpb.SegmentRequest{Tag: cfg.tag}))
		}
	default:
		call = func(ctx context.Context) ([]int64, error) {
			return many(c.SegmentBatch(auth(ctx), &firnpb.SegmentBatchRequest{Tag: cfg.tag, Count: n}))
		}
	}
	return func(ctx context.Context, dst []int64) ([]int64, error) {
		ids, err := call(ctx)
		return append(dst, ids...), err
	}, func() { _ = conn.Close() }, nil
}

func clientCaller(cfg *settings) (caller, func(), error) {
	cc := client.Config{Endpoints: cfg.targets, Token: cfg.token, TLS: cfg.tlsConf}
	c, err := client.New(cc)
	if err != nil {
		return nil, nil, err
	}
	nextN := c.NextN
	if cfg.mode == "segment" {
		nextN = c.Tag(cfg.tag).NextN
	}
	return func(ctx context.Context, dst []int64) ([]int64, error) {
		start := len(dst)
		dst = slices.Grow(dst, cfg.batch)[:start+cfg.batch]
		n, err := nextN(ctx, dst[start:])
		return dst[:start+n], err
	}, func() { _ = c.Close(context.Background()) }, nil
}
