package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/wide"
)

// wideRoutes registers the 128-bit forms of snowflake IDs: UUIDv7 and
// ULID, drawn from the node's generator (so under its HWM and node, and
// never the slot of an int64 ID), and the decoder of UUIDs, ULIDs,
// ObjectIds, KSUIDs and xids. All need the snowflake scope; anonymous
// grants of it open the four that issue IDs, as they do the int64 routes.
func (h *handler) wideRoutes() {
	h.route("GET /v1/uuid/next", snowflakeIDs, func(w http.ResponseWriter, r *http.Request) {
		wideOne(h, w, r, (*wide.Generator).NextUUID)
	})
	h.route("GET /v1/uuid/batch", snowflakeIDs, func(w http.ResponseWriter, r *http.Request) {
		wideBatch(h, w, r, (*wide.Generator).NextUUIDs)
	})
	h.route("GET /v1/ulid/next", snowflakeIDs, func(w http.ResponseWriter, r *http.Request) {
		wideOne(h, w, r, (*wide.Generator).NextULID)
	})
	h.route("GET /v1/ulid/batch", snowflakeIDs, func(w http.ResponseWriter, r *http.Request) {
		wideBatch(h, w, r, (*wide.Generator).NextULIDs)
	})
	h.route("GET /v1/wide/decode/{id}", needSnowflake, h.wideDecode)
}

// wideGen holds the wide generator over the node's current snowflake
// generator, for HTTP and gRPC alike.
type wideGen struct {
	cur atomic.Pointer[wide.Generator]
}

// wideGenerator returns the wide generator over the current snowflake
// generator, made again after Replace installs another.
func (s *service) wideGenerator() (*wide.Generator, error) {
	if s.Opaque != nil {
		return nil, ErrOpaqueWide
	}
	g := s.generator()
	if w := s.wide.cur.Load(); w != nil && w.Snowflake() == g {
		return w, nil
	}
	w, err := wide.New(g)
	if err != nil {
		return nil, err
	}
	s.wide.cur.Store(w)
	return w, nil
}

// wideFormat is format without "number" or an encoding: a UUID or ULID
// is a string with its own text form.
func wideFormat(r *http.Request) (string, error) {
	f, err := format(r)
	switch {
	case err != nil:
		return "", err
	case f.kind == "number":
		return "", badRequest("format number: a UUID or ULID is not a number; want string or text")
	case f.enc != idtext.Decimal:
		return "", badRequest(fmt.Sprintf("encoding %s: a UUID or ULID has its own text form", f.enc))
	}
	return f.kind, nil
}

func wideOne[T fmt.Stringer](h *handler, w http.ResponseWriter, r *http.Request, next func(*wide.Generator, context.Context) (T, error)) {
	f, err := wideFormat(r)
	if err != nil {
		writeError(w, err)
		return
	}
	g, err := h.svc.wideGenerator()
	if err != nil {
		writeError(w, err)
		return
	}
	id, err := next(g, r.Context()) // waits at most the generator's MaxWait, as snowflake calls do
	if err != nil {
		writeError(w, err)
		return
	}
	h.snowflakeIssued(1)
	writeStrings(w, f, true, []T{id})
}

func wideBatch[T fmt.Stringer](h *handler, w http.ResponseWriter, r *http.Request, fill func(*wide.Generator, context.Context, []T) (int, error)) {
	f, err := wideFormat(r)
	if err != nil {
		writeError(w, err)
		return
	}
	n, err := h.count(r)
	if err != nil {
		writeError(w, err)
		return
	}
	g, err := h.svc.wideGenerator()
	if err != nil {
		writeError(w, err)
		return
	}
	ids := make([]T, n)
	if _, err := fill(g, r.Context(), ids); err != nil {
		writeError(w, err)
		return
	}
	h.snowflakeIssued(n)
	writeStrings(w, f, false, ids)
}

// writeStrings writes IDs in their string form: JSON {"id":…} or
// {"ids":[…]}, or one per line.
func writeStrings[T fmt.Stringer](w http.ResponseWriter, f string, one bool, ids []T) {
	var b []byte
	if f == "text" {
		w.Header()["Content-Type"] = textType
		for _, id := range ids {
			b = append(append(b, id.String()...), '\n')
		}
		_, _ = w.Write(b)
		return
	}
	w.Header()["Content-Type"] = jsonType
	if one {
		b = append(b, `{"id":`...)
	} else {
		b = append(b, `{"ids":[`...)
	}
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), id.String()...), '"')
	}
	if !one {
		b = append(b, ']')
	}
	_, _ = w.Write(append(b, "}\n"...))
}

func (h *handler) wideDecode(w http.ResponseWriter, r *http.Request) {
	arg := r.PathValue("id")
	id, err := wide.Parse(arg)
	if err != nil {
		writeError(w, err)
		return
	}
	l := h.svc.generator().Layout()
	var p snowflake.Parts
	switch id.Form {
	case wide.FormUUID:
		p, err = wide.DecodeUUID(l, uuid.UUID(id.Bytes))
	case wide.FormULID:
		p, err = wide.DecodeULID(l, ulid.ULID(id.Bytes))
	default:
		err = wide.ErrNotLayout
	}
	var firn *snowflake.Parts
	if err == nil {
		firn = &p
	} else if !errors.Is(err, wide.ErrNotLayout) && !errors.Is(err, wide.ErrNotV7) {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(api.NewWideDecoded(arg, id, firn))
}
