package wide

import (
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
