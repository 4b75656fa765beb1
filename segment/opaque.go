package segment

import (
	"context"
	"fmt"
	"strconv"
)

// Permutation makes a tag's IDs opaque: a keyed permutation of [0, 2^Bits)
// applied to every ID on the way out (package opaque implements it). Two
// permutations over one tag map distinct IDs to equal outputs, so a tag
// records the permutation it was created with (Recorded) and keeps it for
// its whole life.
type Permutation interface {
	Encode(x uint64) (uint64, error)
	// EncodeN replaces each ID of ids by its image.
	EncodeN(ids []int64) error
	Decode(y uint64) (uint64, error)
	Bits() int
	// Fingerprint names the permutation without revealing its key.
	Fingerprint() string
}

// Recorded is what a tag records of its permutation: its fingerprint and
// the width of the space it permutes; "" for plain IDs. At most
// MaxRecorded bytes.
func Recorded(p Permutation) string {
	if p == nil {
		return ""
	}
	return p.Fingerprint() + "/" + strconv.Itoa(p.Bits())
}

// MaxRecorded is the longest permutation record a store must hold.
const MaxRecorded = 64

// CheckRecorded returns ErrInvalid for a permutation record longer than
// MaxRecorded, which a store's column would cut.
func CheckRecorded(permutation string) error {
	if len(permutation) > MaxRecorded {
		return Errorf(ErrInvalid, ": a permutation record of %d bytes: at most %d", len(permutation), MaxRecorded)
	}
	return nil
}

// ErrPermutation is matched by a *PermutationError.
var ErrPermutation = &kind{"the tag's IDs pass through another permutation than this process's"}

// PermutationError reports a tag whose stored permutation is not the one
// this process would apply: issuing from it would mix two permutations
// (or plain and opaque IDs) in one ID space, which collide.
type PermutationError struct {
	Tag      string
	Recorded string // what the store records: "" for plain IDs
	Want     string // what this process applies: "" for plain IDs
}

func (e *PermutationError) Error() string {
	name := func(s string) string {
		if s == "" {
			return "plain IDs"
		}
		return "opaque IDs (permutation " + s + ")"
	}
	return fmt.Sprintf("segment: tag %q records %s, but this process is configured for %s; "+
		"one tag keeps one permutation for its whole life: set opaque.tags, the key and the tweak as the tag was created, or move to a new tag",
		e.Tag, name(e.Recorded), name(e.Want))
}

// Is makes errors.Is(err, ErrPermutation) true.
func (e *PermutationError) Is(target error) bool { return target == ErrPermutation }

// CheckPermutation returns a *PermutationError unless recorded, a tag's or
// a range's permutation record, is what p gives.
func CheckPermutation(tag, recorded string, p Permutation) error {
	if want := Recorded(p); recorded != want {
		return &PermutationError{Tag: tag, Recorded: recorded, Want: want}
	}
	return nil
}

// ErrOpaqueRange is returned for a request that would hand a range of an
// opaque tag to the caller (Tinyid's nextSegmentId): the range's numbers
// are the plain IDs the permutation hides.
var ErrOpaqueRange = &kind{"the tag's IDs are opaque: its ranges are plain IDs and are not handed out"}

// ErrOpaqueUnsupported is returned when an opaque tag is to be created on
// a store that cannot record its permutation (Leaf's and Tinyid's tables).
var ErrOpaqueUnsupported = &kind{"the store cannot record a tag's permutation: opaque tags need firn's own table, the local store or etcd"}

// OpaqueCreator is a store that records, with a new tag, the permutation
// its IDs pass through (firn's own table, the local store, etcd): Reserve
// returns it in every Range and Tag in TagInfo.Opaque. A store without
// it records none, and holds plain tags only.
type OpaqueCreator interface {
	// CreateTagOpaque is CreateTag (or CreateTagResidue, for delta above
	// 1) with the permutation record, which never changes afterwards.
	CreateTagOpaque(ctx context.Context, tag string, first, step, delta, remainder int64, description, permutation string) error
}

// CreateTag creates tag on s with p's record: a plain tag (p nil) with
// s.CreateTag, an opaque one on an OpaqueCreator, in one write.
func CreateTag(ctx context.Context, s Store, tag string, first, step int64, description string, p Permutation) error {
	if p == nil {
		return s.CreateTag(ctx, tag, first, step, description)
	}
	oc, ok := s.(OpaqueCreator)
	if !ok {
		return &TagError{Tag: tag, Err: Errorf(ErrOpaqueUnsupported, " (%T)", s)}
	}
	return oc.CreateTagOpaque(ctx, tag, first, step, 1, 0, description, Recorded(p))
}

// checkSpace returns an error unless every ID tag may issue, up to max
// (0: the store's own bound, MaxEnd), lies in p's space.
func checkSpace(tag string, p Permutation, max int64) error {
	switch {
	case p == nil || p.Bits() == 63:
		return nil
	case p.Bits() > 63:
		return &TagError{Tag: tag, Err: Errorf(ErrInvalid, ": a permutation of %d bits: its images would not all fit a non-negative int64", p.Bits())}
	case max <= 0 || max>>p.Bits() != 0:
		return &TagError{Tag: tag, Err: Errorf(ErrInvalid, ": a permutation of %d bits over IDs up to %d; bound the tag's IDs below 2^%d (segments.javascript_safe for 53 bits)",
			p.Bits(), max, p.Bits())}
	}
	return nil
}
