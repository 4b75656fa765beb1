package server

import (
	"context"

	"github.com/firn-id/firn/firnpb"
)

// WideBatch answers count UUIDv7s or ULIDs from the node's generator, as
// GET /v1/uuid/batch and /v1/ulid/batch do; a request without a form is
// refused.
func (g *grpcService) WideBatch(ctx context.Context, req *firnpb.WideBatchRequest) (*firnpb.WideBatchResponse, error) {
	n, err := g.count(req.Count)
	if err != nil {
		return nil, grpcError(err)
	}
	w, err := g.svc.wideGenerator()
	if err != nil {
		return nil, grpcError(err)
	}
	switch req.Form {
	case firnpb.WideForm_WIDE_FORM_UUID:
		return wideResponse(ctx, n, w.NextUUIDs)
	case firnpb.WideForm_WIDE_FORM_ULID:
		return wideResponse(ctx, n, w.NextULIDs)
	}
	return nil, grpcError(badRequest("form " + req.Form.String() + ": want WIDE_FORM_UUID or WIDE_FORM_ULID"))
}

func wideResponse[T interface{ String() string }](ctx context.Context, n int, fill func(context.Context, []T) (int, error)) (*firnpb.WideBatchResponse, error) {
	ids := make([]T, n)
	if _, err := fill(ctx, ids); err != nil {
		return nil, grpcError(err)
	}
	resp := &firnpb.WideBatchResponse{Ids: make([]string, n)}
	for i, id := range ids {
		resp.Ids[i] = id.String()
	}
	return resp, nil
}
