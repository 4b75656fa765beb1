package wide

import "errors"

var (
	// ErrTimeRange is returned when a tick's start does not fit the 48-bit
	// Unix millisecond timestamp of UUIDv7 and ULID (after 10889-08-02):
	// by the Next methods of a layout whose time part reaches past it.
	ErrTimeRange = errors.New("wide: time outside the 48-bit millisecond timestamp")

	// ErrNotLayout is returned by DecodeUUID and DecodeULID for an ID
	// that the layout cannot have made: its timestamp is before the epoch
	// or not on a tick boundary, or its tick is past the layout's last.
	ErrNotLayout = errors.New("wide: not an ID of this layout")

	// ErrNotV7 is returned by DecodeUUID for a UUID that is not version 7
	// of the RFC 9562 variant.
	ErrNotV7 = errors.New("wide: not a version 7 UUID")

	// ErrUnknownForm is returned by Parse for a string that is none of the
	// forms it reads, or of a form's length but not valid in it.
	ErrUnknownForm = errors.New("wide: not a UUID, ULID, ObjectId, KSUID or xid")
)
