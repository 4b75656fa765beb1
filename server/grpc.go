package server

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/firn-id/firn/firnpb"
)

// NewGRPC returns a gRPC server serving svc's firnpb.Firn service, with
// the same tokens and scopes as HTTP (metadata "authorization: Bearer …").
// A received message is at most svc's MaxBody; a panicking handler
// answers Internal and is logged with its stack. opts come after these
// (a grpc.MaxRecvMsgSize among them wins); interceptors chained in opts
// run inside the recovery and the token check.
func NewGRPC(svc *Service, opts ...grpc.ServerOption) *grpc.Server {
	if svc.MaxBatch == 0 {
		svc.MaxBatch = 10_000
	}
	g := &grpcService{svc: svc}
	opts = append([]grpc.ServerOption{grpc.MaxRecvMsgSize(int(svc.maxBody())),
		grpc.ChainUnaryInterceptor(g.unaryRecover, g.unaryAuth), grpc.ChainStreamInterceptor(g.streamRecover, g.streamAuth)}, opts...)
	s := grpc.NewServer(opts...)
	firnpb.RegisterFirnServer(s, g)
	healthpb.RegisterHealthServer(s, &health{svc: svc})
	return s
}

// health is the standard gRPC health service (grpc.health.v1): SERVING
// exactly when /readyz would answer 200, for the service "" and
// "firn.v1.Firn". Clients probe it to find servers that answer again.
type health struct {
	healthpb.UnimplementedHealthServer
	svc *Service
}

func (h *health) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if req.Service != "" && req.Service != firnpb.Firn_ServiceDesc.ServiceName {
		return nil, grpcstatus.Errorf(codes.NotFound, "unknown service %q: want \"\" or %q", req.Service, firnpb.Firn_ServiceDesc.ServiceName)
	}
	if err := h.svc.ready(); err != nil {
		return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_NOT_SERVING}, nil
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

type grpcService struct {
	firnpb.UnimplementedFirnServer
	svc *Service
}

func (g *grpcService) count(n int32) (int, error) {
	if n < 1 || int(n) > g.svc.MaxBatch {
		return 0, badRequest(fmt.Sprintf("count %d: want 1 to %d", n, g.svc.MaxBatch))
	}
	return int(n), nil
}

func (g *grpcService) Next(ctx context.Context, _ *firnpb.NextRequest) (*firnpb.NextResponse, error) {
	id, err := g.svc.generator().Next(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	return &firnpb.NextResponse{Id: id}, nil
}

func (g *grpcService) Batch(ctx context.Context, req *firnpb.BatchRequest) (*firnpb.BatchResponse, error) {
	n, err := g.count(req.Count)
	if err != nil {
		return nil, grpcError(err)
	}
	ids := make([]int64, n)
	if _, err := g.svc.generator().NextN(ctx, ids); err != nil {
		return nil, grpcError(err)
	}
	return &firnpb.BatchResponse{Ids: ids}, nil
}

func (g *grpcService) Decode(_ context.Context, req *firnpb.DecodeRequest) (*firnpb.DecodeResponse, error) {
	l := g.svc.generator().Layout()
	p, err := l.Decompose(req.Id)
	if err != nil {
		return nil, grpcError(badRequest(fmt.Sprintf("ID %d does not fit the %d-bit %s layout", req.Id, l.Bits(), l.Name)))
	}
	resp := &firnpb.DecodeResponse{Id: req.Id, UnixMs: p.Time.UnixMilli(), Tick: p.Tick, Sequence: p.Sequence, Node: map[string]uint64{}}
	for _, f := range p.Fields {
		resp.Node[f.Name] = f.Value
	}
	return resp, nil
}

func (g *grpcService) SegmentNext(ctx context.Context, req *firnpb.SegmentRequest) (*firnpb.NextResponse, error) {
	if err := checkTag(req.Tag); err != nil {
		return nil, grpcError(err)
	}
	id, err := g.svc.Segments.Next(ctx, req.Tag)
	if err != nil {
		return nil, grpcError(err)
	}
	return &firnpb.NextResponse{Id: id}, nil
}

func (g *grpcService) SegmentBatch(ctx context.Context, req *firnpb.SegmentBatchRequest) (*firnpb.BatchResponse, error) {
	n, err := g.count(req.Count)
	if err == nil {
		err = checkTag(req.Tag)
	}
	if err != nil {
		return nil, grpcError(err)
	}
	ids := make([]int64, n)
	if _, err := g.svc.Segments.NextN(ctx, req.Tag, ids); err != nil {
		return nil, grpcError(err)
	}
	return &firnpb.BatchResponse{Ids: ids}, nil
}

// Stream sends batches until the client cancels or an error stops it.
func (g *grpcService) Stream(req *firnpb.StreamRequest, stream firnpb.Firn_StreamServer) error {
	n, err := g.count(req.Batch)
	if err == nil {
		err = checkTag(req.Tag)
	}
	if err != nil {
		return grpcError(err)
	}
	ctx := stream.Context()
	fill := g.svc.generator().NextN
	if req.Tag != "" {
		h, err := g.svc.Segments.Tag(ctx, req.Tag)
		if err != nil {
			return grpcError(err)
		}
		fill = h.NextN
	}
	for ctx.Err() == nil {
		ids := make([]int64, n)
		if _, err := fill(ctx, ids); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return grpcError(err)
		}
		if err := stream.Send(&firnpb.BatchResponse{Ids: ids}); err != nil {
			return nil // the client went away; the IDs are dropped, never reissued
		}
	}
	return nil
}

// scopeOf returns the scope a gRPC call needs.
func scopeOf(method string, req any) string {
	switch m := method[strings.LastIndexByte(method, '/')+1:]; m {
	case "SegmentNext":
		return "tag:" + req.(*firnpb.SegmentRequest).Tag
	case "SegmentBatch":
		return "tag:" + req.(*firnpb.SegmentBatchRequest).Tag
	case "Stream":
		if tag := req.(*firnpb.StreamRequest).Tag; tag != "" {
			return "tag:" + tag
		}
	}
	return "snowflake"
}

func (g *grpcService) authorize(ctx context.Context, method string, req any) error {
	if !g.svc.Auth.Enabled() {
		return nil
	}
	secret := ""
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get("authorization")) > 0 {
		secret = strings.TrimPrefix(md.Get("authorization")[0], "Bearer ")
	}
	if code, msg := g.svc.Auth.allow(scopeOf(method, req), secret); code != 0 {
		return grpcError(&apiError{status: code, code: "unauthorized", message: msg})
	}
	return nil
}

// unaryAuth checks every call but the health check, which is open as
// /readyz is.
func (g *grpcService) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	if strings.HasPrefix(info.FullMethod, "/grpc.health.v1.Health/") {
		return next(ctx, req)
	}
	if err := g.authorize(ctx, info.FullMethod, req); err != nil {
		return nil, err
	}
	return next(ctx, req)
}

// streamAuth checks the first message, which names the tag.
func (g *grpcService) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
	return next(srv, &authStream{ServerStream: ss, g: g, method: info.FullMethod})
}

type authStream struct {
	grpc.ServerStream
	g       *grpcService
	method  string
	checked bool
}

func (s *authStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if !s.checked {
		s.checked = true
		return s.g.authorize(s.Context(), s.method, m)
	}
	return nil
}
