package wide

import (
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
)

func parseUUID(s string) (ID, error) {
	u, err := uuid.Parse(s)
	if err != nil {
		return ID{}, fmt.Errorf("UUID %q: %w: %w", s, err, ErrUnknownForm)
	}
	id := ID{Form: FormUUID, Bytes: u[:], Fields: []Field{
		{"version", strconv.Itoa(int(u.Version()))},
		{"variant", u.Variant().String()},
	}}
	switch v := u.Version(); {
	case v == 7 && u.Variant() == uuid.RFC4122:
		hi, lo := binary.BigEndian.Uint64(u[:8]), binary.BigEndian.Uint64(u[8:])
		id.Time = time.UnixMilli(int64(hi >> 16)).UTC()
		id.Fields = append(id.Fields, Field{"rand_a", fmt.Sprintf("%03x", hi&0xfff)}, Field{"rand_b", fmt.Sprintf("%016x", lo&(1<<62-1))})
	case (v == 1 || v == 6) && u.Variant() == uuid.RFC4122:
		id.Time = gregorian(u)
		id.Fields = append(id.Fields, Field{"clock_seq", strconv.Itoa(u.ClockSequence())}, Field{"node", hex.EncodeToString(u.NodeID())})
	}
	return id, nil
}

// gregorianToUnix is the count of 100 ns intervals from the start of the
// Gregorian calendar (1582-10-15) to the Unix epoch.
const gregorianToUnix = 0x01B21DD213814000

// gregorian returns the time of a version 1 or 6 UUID: 60 bits of 100 ns
// intervals since 1582-10-15 (RFC 9562 §5.1, §5.6). Version 6 is read
// here rather than by uuid.Time, which in google/uuid v1.6.0 does not
// take out its version bits.
func gregorian(u uuid.UUID) time.Time {
	hi := binary.BigEndian.Uint64(u[:8])
	var ts uint64
	if u.Version() == 6 { // time_high (32) | time_mid (16) | ver | time_low (12)
		ts = hi>>32<<28 | hi>>16&0xffff<<12 | hi&0xfff
	} else { // time_low (32) | time_mid (16) | ver | time_high (12)
		ts = hi>>32 | hi>>16&0xffff<<32 | hi&0xfff<<48
	}
	d := int64(ts) - gregorianToUnix
	return time.Unix(d/1e7, d%1e7*100).UTC()
}

func parseULID(s string) (ID, error) {
	u, err := ulid.ParseStrict(s)
	if err != nil {
		return ID{}, fmt.Errorf("ULID %q: %w: %w", s, err, ErrUnknownForm)
	}
	return ID{Form: FormULID, Bytes: u[:], Time: ulid.Time(u.Time()).UTC(),
		Fields: []Field{{"randomness", hex.EncodeToString(u[6:])}}}, nil
}

func parseObjectID(s string) (ID, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return ID{}, fmt.Errorf("ObjectId %q: %w: %w", s, err, ErrUnknownForm)
	}
	return ID{Form: FormObjectID, Bytes: b, Time: time.Unix(int64(binary.BigEndian.Uint32(b)), 0).UTC(), Fields: []Field{
		{"random", hex.EncodeToString(b[4:9])},
		{"counter", strconv.FormatUint(uint64(b[9])<<16|uint64(b[10])<<8|uint64(b[11]), 10)},
	}}, nil
}

// ksuidEpoch is KSUID's time zero, in Unix seconds.
const ksuidEpoch = 1400000000

// base62 is KSUID's alphabet: digits, upper case, lower case, in ASCII
// order.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func parseKSUID(s string) (ID, error) {
	n := new(big.Int)
	for i := range len(s) {
		d := strings.IndexByte(base62, s[i])
		if d < 0 {
			return ID{}, fmt.Errorf("KSUID %q: %q is not a base62 character: %w", s, s[i], ErrUnknownForm)
		}
		n.Mul(n, big.NewInt(62)).Add(n, big.NewInt(int64(d)))
	}
	if n.BitLen() > 160 {
		return ID{}, fmt.Errorf("KSUID %q: over 160 bits: %w", s, ErrUnknownForm)
	}
	b := n.FillBytes(make([]byte, 20))
	ts := binary.BigEndian.Uint32(b)
	return ID{Form: FormKSUID, Bytes: b, Time: time.Unix(ksuidEpoch+int64(ts), 0).UTC(), Fields: []Field{
		{"timestamp", strconv.FormatUint(uint64(ts), 10)},
		{"payload", hex.EncodeToString(b[4:])},
	}}, nil
}

// xidEncoding is xid's base32hex, lower case, without padding.
var xidEncoding = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

func parseXID(s string) (ID, error) {
	b, err := xidEncoding.DecodeString(s)
	// 20 characters carry 100 bits for 96: the last one's low four bits
	// are zero in every xid, and a string with them set is not one.
	if err != nil || len(b) != 12 || xidEncoding.EncodeToString(b) != s {
		return ID{}, fmt.Errorf("xid %q: not 20 characters of lower-case base32hex (0-9, a-v) encoding 12 bytes: %w", s, ErrUnknownForm)
	}
	return ID{Form: FormXID, Bytes: b, Time: time.Unix(int64(binary.BigEndian.Uint32(b)), 0).UTC(), Fields: []Field{
		{"machine", hex.EncodeToString(b[4:7])},
		{"pid", strconv.Itoa(int(binary.BigEndian.Uint16(b[7:9])))},
		{"counter", strconv.FormatUint(uint64(b[9])<<16|uint64(b[10])<<8|uint64(b[11]), 10)},
	}}, nil
}
