package wide

import (
	"context"
	crand "crypto/rand"
	"errors"
	"math/rand/v2"
	"sync"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/firn-id/firn/snowflake"
)

// Generator issues UUIDv7s and ULIDs from the slots of a
// snowflake.Generator. It is safe for concurrent use, and the snowflake
// generator may go on issuing int64 IDs beside it: each slot is handed
// out once, in one form.
type Generator struct {
	gen *snowflake.Generator
	p   packing
}

// New returns a generator over g. It does no I/O and starts no
// goroutines.
func New(g *snowflake.Generator) (*Generator, error) {
	if g == nil {
		return nil, errors.New("wide: no snowflake generator")
	}
	p, err := newPacking(g.Layout())
	if err != nil {
		return nil, err
	}
	return &Generator{gen: g, p: p}, nil
}

// Snowflake returns the generator whose slots w issues.
func (w *Generator) Snowflake() *snowflake.Generator { return w.gen }

// chunk is how many IDs a batch takes from the snowflake generator at a
// time.
const chunk = 256

// form is the 128-bit form an ID is packed in.
type form int

const (
	uuidForm form = iota
	ulidForm
)

// NextUUID returns a new UUIDv7.
func (w *Generator) NextUUID(ctx context.Context) (uuid.UUID, error) {
	var u uuid.UUID
	return u, w.next(ctx, (*[16]byte)(&u), uuidForm)
}

// NextULID returns a new ULID.
func (w *Generator) NextULID(ctx context.Context) (ulid.ULID, error) {
	var u ulid.ULID
	return u, w.next(ctx, (*[16]byte)(&u), ulidForm)
}

// NextUUIDs fills dst with new UUIDv7s, in increasing order. It returns
// the number written: len(dst), or fewer with an error.
func (w *Generator) NextUUIDs(ctx context.Context, dst []uuid.UUID) (int, error) {
	return nextN(ctx, w, dst, uuidForm)
}

// NextULIDs fills dst with new ULIDs, in increasing order. It returns
// the number written: len(dst), or fewer with an error.
func (w *Generator) NextULIDs(ctx context.Context, dst []ulid.ULID) (int, error) {
	return nextN(ctx, w, dst, ulidForm)
}

func (w *Generator) next(ctx context.Context, dst *[16]byte, f form) error {
	id, err := w.gen.Next(ctx)
	if err != nil {
		return err
	}
	src := sources.Get().(*rand.ChaCha8)
	defer sources.Put(src)
	return w.pack(dst, f, uint64(id), src)
}

func nextN[T ~[16]byte](ctx context.Context, w *Generator, dst []T, f form) (int, error) {
	src := sources.Get().(*rand.ChaCha8)
	defer sources.Put(src)
	var ids [chunk]int64
	n := 0
	for n < len(dst) {
		k, err := w.gen.NextN(ctx, ids[:min(chunk, len(dst)-n)])
		for _, id := range ids[:k] {
			var v [16]byte
			if perr := w.pack(&v, f, uint64(id), src); perr != nil {
				return n, perr
			}
			dst[n] = T(v)
			n++
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// pack writes the slot of a snowflake ID in form f, random bits from src
// below it.
func (w *Generator) pack(dst *[16]byte, f form, id uint64, src *rand.ChaCha8) error {
	tick, node, seq := w.p.split.Split(id)
	if f == ulidForm {
		return w.p.ulid(dst, tick, node, seq, src.Uint64(), src.Uint64())
	}
	return w.p.uuid(dst, tick, node, seq, src.Uint64(), src.Uint64())
}

// sources hands out the random bits below the slot: ChaCha8 generators
// (math/rand/v2, cryptographically strong), each seeded once from
// crypto/rand, a read of which per ID would cost more than the rest of
// the ID. The bits carry no part of uniqueness (the slot does); they make
// an ID hard to guess from its neighbours, as RFC 9562 §6.9 asks.
var sources = sync.Pool{New: func() any {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // never fails (Go 1.24+)
	return rand.NewChaCha8(seed)
}}
