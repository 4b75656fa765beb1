package server

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/idtext"
)

// newGRPC returns the gRPC server of svc (see Server.GRPC), counted in m.
func newGRPC(svc *service, m *metrics, opts ...grpc.ServerOption) *grpc.Server {
	g := &grpcService{svc: svc, metrics: newGRPCMetrics(m)}
	opts = append([]grpc.ServerOption{grpc.MaxRecvMsgSize(int(svc.maxBody())),
		grpc.ChainUnaryInterceptor(g.metrics.unary, g.unaryRecover, g.unaryAuth),
		grpc.ChainStreamInterceptor(g.metrics.stream, g.streamRecover, g.streamAuth)}, opts...)
	s := grpc.NewServer(opts...)
	firnpb.RegisterFirnServer(s, g)
	healthpb.RegisterHealthServer(s, &health{svc: svc})
	reflection.Register(s)
	return s
}

// health is the standard gRPC health service (grpc.health.v1): SERVING
// exactly when /readyz would answer 200, for the service "" and
// "firn.v1.Firn"; per mode for HealthSnowflake and HealthSegments.
// Clients probe it to find servers that answer again.
type health struct {
	healthpb.UnimplementedHealthServer
	svc *service
}

func (h *health) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if err := checkHealthService(req.Service); err != nil {
		return nil, err
	}
	var serving bool
	switch req.Service {
	case "", firnpb.Firn_ServiceDesc.ServiceName:
		serving = h.svc.ready() == nil
	case HealthSnowflake:
		serving = h.svc.generator() != nil && h.svc.ready() == nil
	case HealthSegments:
		// Segments serve from their buffers whatever the node's lease;
		// a tag whose store is down shows per tag, as 503 once dry.
		serving = h.svc.Segments != nil
	}
	return healthOf(serving), nil
}

// checkHealthService refuses a health service name firn does not answer
// for.
func checkHealthService(name string) error {
	switch name {
	case "", firnpb.Firn_ServiceDesc.ServiceName, HealthSnowflake, HealthSegments:
		return nil
	}
	return grpcstatus.Errorf(codes.NotFound, "unknown service %q: want \"\", %q, %q or %q",
		name, firnpb.Firn_ServiceDesc.ServiceName, HealthSnowflake, HealthSegments)
}

func healthOf(serving bool) *healthpb.HealthCheckResponse {
	if !serving {
		return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_NOT_SERVING}
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}
}

// The gRPC health service names of each mode, beside "" and
// "firn.v1.Firn" (the whole server, as /readyz): a client of one mode
// probes that mode alone.
const (
	HealthSnowflake = "firn.v1.Firn/snowflake"
	HealthSegments  = "firn.v1.Firn/segments"
)

type grpcService struct {
	firnpb.UnimplementedFirnServer
	svc     *service
	metrics *grpcMetrics
}

func (g *grpcService) count(n int32) (int, error) {
	if n < 1 || int(n) > g.svc.MaxBatch {
		return 0, badRequest(fmt.Sprintf("count %d: want 1 to %d", n, g.svc.MaxBatch))
	}
	return int(n), nil
}

func (g *grpcService) Next(ctx context.Context, req *firnpb.NextRequest) (*firnpb.NextResponse, error) {
	enc, err := encodingOf(req.Encoding)
	if err != nil {
		return nil, grpcError(err)
	}
	id, err := g.svc.nextSnowflake(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	g.metrics.issued("", 1)
	return &firnpb.NextResponse{Id: id, Text: text(enc, id)}, nil
}

func (g *grpcService) Batch(ctx context.Context, req *firnpb.BatchRequest) (*firnpb.BatchResponse, error) {
	n, err := g.count(req.Count)
	if err != nil {
		return nil, grpcError(err)
	}
	enc, err := encodingOf(req.Encoding)
	if err != nil {
		return nil, grpcError(err)
	}
	ids := make([]int64, n)
	if _, err := g.svc.nextSnowflakeN(ctx, ids); err != nil {
		return nil, grpcError(err)
	}
	g.metrics.issued("", n)
	_ = grpc.SetHeader(ctx, orderMD(g.svc.order)) // fails only once headers went out, which a unary call's do with its answer
	return &firnpb.BatchResponse{Ids: ids, Texts: texts(enc, ids)}, nil
}

func (g *grpcService) Decode(_ context.Context, req *firnpb.DecodeRequest) (*firnpb.DecodeResponse, error) {
	if g.svc.Opaque != nil {
		return nil, grpcError(ErrOpaqueIDs)
	}
	l, _ := g.svc.layout() // modeOff let the call through only with a layout
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
	enc, err := encodingOf(req.Encoding)
	if err != nil {
		return nil, grpcError(err)
	}
	id, err := g.svc.Segments.Next(ctx, req.Tag)
	if err != nil {
		g.svc.noteFailure(err)
		return nil, grpcError(err)
	}
	g.metrics.issued(req.Tag, 1)
	return &firnpb.NextResponse{Id: id, Text: text(enc, id)}, nil
}

func (g *grpcService) SegmentBatch(ctx context.Context, req *firnpb.SegmentBatchRequest) (*firnpb.BatchResponse, error) {
	n, err := g.count(req.Count)
	if err == nil {
		err = checkTag(req.Tag)
	}
	if err != nil {
		return nil, grpcError(err)
	}
	enc, err := encodingOf(req.Encoding)
	if err != nil {
		return nil, grpcError(err)
	}
	ids := make([]int64, n)
	if _, err := g.svc.Segments.NextN(ctx, req.Tag, ids); err != nil {
		g.svc.noteFailure(err)
		return nil, grpcError(err)
	}
	g.metrics.issued(req.Tag, n)
	_ = grpc.SetHeader(ctx, orderMD(api.OrderUnordered))
	return &firnpb.BatchResponse{Ids: ids, Texts: texts(enc, ids)}, nil
}

// orderMD is the response header of a batch whose IDs are in order, an
// api.Order.
func orderMD(order string) metadata.MD { return metadata.Pairs(api.Order, order) }

// Stream sends batches until the client cancels or an error stops it.
func (g *grpcService) Stream(req *firnpb.StreamRequest, stream firnpb.Firn_StreamServer) error {
	kind := scopeSnowflake
	if req.Tag != "" {
		kind = scopeTag
	}
	// The mode first, as for every other call: a server whose mode is off
	// answers Unavailable whatever the request.
	if err := g.svc.modeOff(kind); err != nil {
		return grpcError(err)
	}
	n, err := g.count(req.Batch)
	if err == nil {
		err = checkTag(req.Tag)
	}
	var enc idtext.Encoding
	if err == nil {
		enc, err = encodingOf(req.Encoding)
	}
	if err != nil {
		return grpcError(err)
	}
	ctx := stream.Context()
	var fill func(context.Context, []int64) (int, error)
	order := api.OrderUnordered
	if req.Tag == "" {
		fill, order = g.svc.nextSnowflakeN, g.svc.order
	} else {
		h, err := g.svc.Segments.Tag(ctx, req.Tag)
		if err != nil {
			g.svc.noteFailure(err)
			return grpcError(err)
		}
		fill = h.NextN
	}
	if err := stream.SetHeader(orderMD(order)); err != nil {
		return err
	}
	for ctx.Err() == nil {
		if err := g.svc.modeOff(kind); err != nil { // a site's process may stop issuing for good meanwhile
			return grpcError(err)
		}
		ids := make([]int64, n)
		if _, err := fill(ctx, ids); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return grpcError(err)
		}
		if err := stream.Send(&firnpb.BatchResponse{Ids: ids, Texts: texts(enc, ids)}); err != nil {
			return nil // the client went away; the IDs are dropped, never reissued
		}
		g.metrics.issued(req.Tag, n)
	}
	return nil
}

// A gRPC method's scope, declared for every method the server registers
// (firn.v1.Firn, the health service, reflection); a call to a method not
// in grpcScopes is refused, never given a default scope.
type grpcScope struct {
	// need returns the scope of a call from its request message; nil for
	// an open method.
	need func(req any) string
	// fromMessage: the scope depends on the first message of a stream
	// (Stream names its tag there).
	fromMessage bool
	// or is a second scope that also grants the method (status for
	// Decode, as for HTTP's decode routes).
	or string
	// kind says what the method needs of the server (service.modeOff):
	// a generator, a layout or the segment allocator. A method that needs
	// a scope and declares no kind is refused.
	kind scopeKind
}

func snowflakeScope(any) string { return "snowflake" }

var grpcScopes = map[string]grpcScope{
	"/firn.v1.Firn/Next":         {need: snowflakeScope, kind: scopeSnowflake},
	"/firn.v1.Firn/Batch":        {need: snowflakeScope, kind: scopeSnowflake},
	"/firn.v1.Firn/Decode":       {need: snowflakeScope, or: "status", kind: scopeDecode},
	"/firn.v1.Firn/WideBatch":    {need: snowflakeScope, kind: scopeSnowflake},
	"/firn.v1.Firn/SegmentNext":  {need: func(req any) string { return "tag:" + req.(*firnpb.SegmentRequest).GetTag() }, kind: scopeTag},
	"/firn.v1.Firn/SegmentBatch": {need: func(req any) string { return "tag:" + req.(*firnpb.SegmentBatchRequest).GetTag() }, kind: scopeTag},
	"/firn.v1.Firn/Stream": {fromMessage: true, need: func(req any) string {
		if tag := req.(*firnpb.StreamRequest).GetTag(); tag != "" {
			return "tag:" + tag
		}
		return "snowflake"
	}},
	"/grpc.health.v1.Health/Check": {}, // open, as /readyz is
	"/grpc.health.v1.Health/Watch": {},
	// Reflection describes the API to tools such as grpcurl: admin.
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":      {need: adminScope, kind: scopeAdmin},
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": {need: adminScope, kind: scopeAdmin},
}

func adminScope(any) string { return "admin" }

// errUndeclared refuses a method that declares no scope.
func errUndeclared(method string) error {
	return grpcstatus.Errorf(codes.PermissionDenied, "method %s declares no scope", method)
}

// authorize checks the call's token against the scope need.
func (g *grpcService) authorize(ctx context.Context, need string) error {
	if need == "" {
		return nil
	}
	return g.authorizeGrant(ctx, grantOf(need))
}

// authorizeGrant checks a call's credentials against the grant it needs.
func (g *grpcService) authorizeGrant(ctx context.Context, need grant) error {
	if !g.svc.Auth.Enabled() || need.open() {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		if no := g.svc.Auth.allowGrant(need, "", false); no != nil {
			return grpcError(&apiError{status: no.status, code: "unauthorized", message: no.message})
		}
		return nil
	}
	secret, ok := bearer(vals[0])
	if !ok {
		return grpcError(&apiError{status: 401, code: "unauthorized", message: "authorization: want the scheme Bearer and a token (authorization: Bearer …)"})
	}
	if no := g.svc.Auth.allowGrant(need, secret, true); no != nil {
		return grpcError(&apiError{status: no.status, code: "unauthorized", message: no.message})
	}
	return nil
}

// unaryAuth checks every call against its method's declared scope.
func (g *grpcService) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	sc, ok := grpcScopes[info.FullMethod]
	if !ok || sc.fromMessage || sc.need != nil && sc.kind == scopeNone {
		return nil, errUndeclared(info.FullMethod)
	}
	if sc.need != nil {
		need := sc.need(req)
		gr := grantOf(need)
		gr.or = sc.or
		if err := g.authorizeGrant(ctx, gr); err != nil {
			return nil, err
		}
		if err := g.svc.modeOff(sc.kind); err != nil {
			return nil, grpcError(err)
		}
	}
	return next(ctx, req)
}

// streamAuth checks a stream at its start, or at its first message when
// the scope depends on it.
func (g *grpcService) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
	sc, ok := grpcScopes[info.FullMethod]
	switch {
	case !ok:
		return errUndeclared(info.FullMethod)
	case sc.need == nil:
		return next(srv, ss)
	case sc.fromMessage:
		return next(srv, &authStream{ServerStream: ss, g: g, need: sc.need})
	}
	if sc.kind == scopeNone {
		return errUndeclared(info.FullMethod)
	}
	if err := g.authorize(ss.Context(), sc.need(nil)); err != nil {
		return err
	}
	if err := g.svc.modeOff(sc.kind); err != nil {
		return grpcError(err)
	}
	return next(srv, ss)
}

type authStream struct {
	grpc.ServerStream
	g       *grpcService
	need    func(req any) string
	checked bool
}

func (s *authStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if !s.checked {
		s.checked = true
		return s.g.authorize(s.Context(), s.need(m))
	}
	return nil
}

// encodingOf reads a request's encoding: an unknown value is refused
// rather than answered in decimal.
func encodingOf(e firnpb.Encoding) (idtext.Encoding, error) {
	switch e {
	case firnpb.Encoding_ENCODING_DECIMAL:
		return idtext.Decimal, nil
	case firnpb.Encoding_ENCODING_BASE62:
		return idtext.Base62, nil
	case firnpb.Encoding_ENCODING_BASE32:
		return idtext.Base32, nil
	}
	return 0, badRequest(fmt.Sprintf("encoding %d: want ENCODING_DECIMAL, ENCODING_BASE62 or ENCODING_BASE32", e))
}

// text is id in enc, or "" for decimal (the number says it).
func text(enc idtext.Encoding, id int64) string {
	if enc == idtext.Decimal {
		return ""
	}
	return string(enc.Append(nil, uint64(id)))
}

// texts are ids in enc, or nil for decimal.
func texts(enc idtext.Encoding, ids []int64) []string {
	if enc == idtext.Decimal {
		return nil
	}
	out := make([]string, len(ids))
	var buf [idtext.Base32Width]byte
	for i, id := range ids {
		out[i] = string(enc.Append(buf[:0], uint64(id)))
	}
	return out
}
