package wide

import (
	"errors"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/firn-id/firn/snowflake"
)

// DecodeUUID returns the slot of a UUIDv7 that a generator of layout l
// issued: its tick, node fields and sequence, and the int64 ID of the same
// slot (which the generator never issued in another form). It returns
// ErrNotV7 for another version or variant and ErrNotLayout for a UUIDv7
// the layout cannot have made; the layout must be valid.
func DecodeUUID(l snowflake.Layout, u uuid.UUID) (snowflake.Parts, error) {
	p, err := newPacking(l)
	if err != nil {
		return snowflake.Parts{}, err
	}
	return p.fromUUID((*[16]byte)(&u))
}

// DecodeULID returns the slot of a ULID that a generator of layout l
// issued, as DecodeUUID does; ErrNotLayout for one the layout cannot have
// made.
func DecodeULID(l snowflake.Layout, u ulid.ULID) (snowflake.Parts, error) {
	p, err := newPacking(l)
	if err != nil {
		return snowflake.Parts{}, err
	}
	return p.fromULID((*[16]byte)(&u))
}

// Slot returns the slot of layout l that id is, when id is a UUIDv7 or a
// ULID that a generator of l can have made; ok is false for other forms,
// other UUID versions and IDs l cannot have made. Any generator's UUIDv7
// reads as some slot of a 1 ms layout: ok says only that l can have made
// it.
func (id ID) Slot(l snowflake.Layout) (p snowflake.Parts, ok bool, err error) {
	switch id.Form {
	case FormUUID:
		p, err = DecodeUUID(l, uuid.UUID(id.Bytes))
	case FormULID:
		p, err = DecodeULID(l, ulid.ULID(id.Bytes))
	default:
		return p, false, nil
	}
	if errors.Is(err, ErrNotLayout) || errors.Is(err, ErrNotV7) {
		return snowflake.Parts{}, false, nil
	}
	return p, err == nil, err
}
