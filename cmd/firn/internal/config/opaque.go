package config

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/snowflake"
)

// Opaque makes IDs opaque: every snowflake ID, and every ID of the tags
// listed, passes through a keyed permutation of its ID space (package
// opaque), so it shows neither its time nor how many came before it. The
// key's fingerprint and the tweak are recorded with the namespace's
// layout, and with each opaque tag when it is created: a namespace or tag
// keeps one key and one tweak for its whole life, and a server with
// another key, another tweak, or opaque mode set differently refuses it
// (two permutations over one space collide).
type Opaque struct {
	// Snowflake permutes every snowflake ID this server issues.
	Snowflake bool `yaml:"snowflake" flag:"opaque" help:"opaque IDs: every snowflake ID a keyed permutation of the layout's (docs/config.md#opaque-ids)"`
	// Tags lists the segment tags (or "*" for all) whose IDs are opaque:
	// a permutation of 63 bits per tag (53 for the tags in
	// segments.javascript_safe), recorded with the tag when it is
	// created. A tag created plain stays plain, and the reverse: list a
	// tag here before creating it. Needs firn's own segment table
	// (segments.format set), the local store or etcd.
	Tags []string `yaml:"tags" flag:"opaque-tags" arg:"T,U" help:"tags (\"*\": all) whose IDs are opaque, each under its own permutation, recorded with the tag when it is created (needs {segments.format} set, the local store or etcd)"`
	// KeyFile names a file holding the key in hex: 32, 48 or 64 digits
	// (AES-128, -192, -256), such as the output of openssl rand -hex 32.
	KeyFile string `yaml:"key_file" flag:"opaque-key-file" path:"true" arg:"FILE" help:"the file holding the key in hex: 32, 48 or 64 digits (openssl rand -hex 32 > key)"`
	// Key is the key itself, in hex, in the configuration file only
	// (never a flag or variable); config print hides it. Prefer KeyFile.
	Key string `yaml:"key" flag:"-" secret:"true" help:"the key itself, in hex, in place of {opaque.key_file}; redacted by config print"`
	// Tweak is part of the permutation: IDs of one key under two tweaks
	// differ. Recorded, in hex, with the layout.
	Tweak string `yaml:"tweak" flag:"opaque-tweak" arg:"T" help:"the tweak, part of the permutation (IDs of one key under two tweaks differ), recorded in hex with the layout"`
	// AcceptUncheckedKey, with a static or derived node, promises that
	// every machine uses the same key and tweak: each records only its
	// own, so nothing can check it, and two keys over one space collide.
	AcceptUncheckedKey bool `yaml:"accept_unchecked_key" flag:"opaque-accept-unchecked-key" help:"required with a static or derived node ({registry.node}): promise every machine uses the same key and tweak (each records only its own; two keys collide)"`
}

// CheckNode refuses opaque mode with a node the operator names (a static
// node, or derived) unless AcceptUncheckedKey: a shared registry records
// the key's fingerprint for every machine, a machine's own data directory
// only for itself.
func (o Opaque) CheckNode(node string) error {
	if o.Snowflake && node != "" && !o.AcceptUncheckedKey {
		return &FieldError{Field: "opaque.accept_unchecked_key", Reason: "opaque mode with a static or derived node (registry.node " + node +
			"): each machine records only its own key, so nothing checks that every machine uses the same key and tweak, and two keys collide; " +
			"set it to true to promise they do, or take nodes from a shared registry (etcd, postgres, mysql)"}
	}
	return nil
}

// Validate checks opaque mode's settings, for firn serve's configuration
// and for the commands that take them as flags; the key file is read, and
// the layout's size checked, where the layout is read.
func (o Opaque) Validate() error {
	fail := func(field, reason string) error { return &FieldError{Field: field, Reason: reason} }
	switch {
	case o.Key != "" && o.KeyFile != "":
		return fail("opaque.key", "set the key or a key file, not both")
	case o.On() && o.Key == "" && o.KeyFile == "":
		return fail("opaque.key_file", "opaque mode needs a key: name a file holding 32, 48 or 64 hex digits (openssl rand -hex 32 > key)")
	case !o.On() && (o.Key != "" || o.KeyFile != "" || o.Tweak != ""):
		return fail("opaque.snowflake", "a key or tweak is set but opaque mode is off: set opaque.snowflake to true or list tags in opaque.tags, or remove the key")
	case len(o.Tweak) > opaque.MaxTweak:
		return fail("opaque.tweak", fmt.Sprintf("%d bytes: want at most %d", len(o.Tweak), opaque.MaxTweak))
	}
	if o.Key != "" {
		if _, err := opaque.ParseKey([]byte(o.Key)); err != nil {
			return fail("opaque.key", err.Error())
		}
	}
	return CheckTagList("opaque.tags", o.Tags)
}

// On reports whether any IDs are opaque: snowflake IDs or a tag's.
func (o Opaque) On() bool { return o.Snowflake || len(o.Tags) > 0 }

// Permutation checks opaque mode's settings and returns the permutation
// they name over l's IDs, or nil when opaque mode is off. The key is
// never part of a message. Its errors are *FieldError or *InputError.
func (o Opaque) Permutation(l snowflake.Layout) (*opaque.Permutation, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if !o.Snowflake {
		return nil, nil
	}
	key, err := o.readKey()
	if err != nil {
		return nil, err
	}
	p, err := opaque.New(key, []byte(o.Tweak), l.Bits())
	if errors.Is(err, opaque.ErrDomain) {
		return nil, inputf("opaque.snowflake: the layout has %d bits; opaque mode needs %d to %d (FF1's smallest binary domain holds a million IDs)",
			l.Bits(), opaque.MinBits, opaque.MaxBits)
	}
	if err != nil {
		return nil, inputf("opaque: %s", err)
	}
	return p, nil
}

// readKey reads the key of valid opaque settings. The key is never part
// of a message.
func (o Opaque) readKey() ([]byte, error) {
	text, where := []byte(o.Key), "opaque.key"
	if o.KeyFile != "" {
		b, err := secret.ReadFile(o.KeyFile)
		if err != nil {
			reason := err.Error()
			if _, kerr := opaque.ParseKey([]byte(o.KeyFile)); kerr == nil {
				reason = "the value given is a key, not the name of a file: write the key to a file and name that"
			}
			return nil, &FieldError{Field: "opaque.key_file", Reason: reason}
		}
		text, where = b, "opaque.key_file "+o.KeyFile
	}
	key, err := opaque.ParseKey(text)
	if err != nil {
		return nil, inputf("%s: %s", where, err)
	}
	return key, nil
}

// TagPermutations returns the permutation of each tag o lists, nil for
// the others: 63 bits, or 53 for a tag maxID bounds at 2^53−1
// (segments.javascript_safe, Segments.MaxID). Each tag has its own
// permutation, under a tweak derived from opaque.tweak and the tag's
// name, so equal plain IDs of two tags look unrelated. It returns nil
// when no tag is opaque. o must be valid (Validate); its errors are
// *FieldError or *InputError.
func (o Opaque) TagPermutations(maxID func(string) int64) (func(tag string) segment.Permutation, error) {
	if len(o.Tags) == 0 {
		return nil, nil
	}
	key, err := o.readKey()
	if err != nil {
		return nil, err
	}
	for _, bits := range []int{53, 63} { // every tag's permutation differs from these in its tweak alone
		if _, err := opaque.New(key, tagTweak(o.Tweak, ""), bits); err != nil {
			return nil, inputf("opaque.tags: %s", err)
		}
	}
	all, listed := slices.Contains(o.Tags, "*"), map[string]bool{}
	for _, t := range o.Tags {
		listed[t] = true
	}
	var cache sync.Map // tag -> segment.Permutation
	var cached atomic.Int64
	return func(tag string) segment.Permutation {
		if !all && !listed[tag] {
			return nil
		}
		if p, ok := cache.Load(tag); ok {
			return p.(segment.Permutation)
		}
		bits := 63
		if maxID != nil && maxID(tag) == segment.JavaScriptSafe {
			bits = 53
		}
		p, err := opaque.New(key, tagTweak(o.Tweak, tag), bits)
		if err != nil { // unreachable: the same key and widths, and a tweak of the same length, were taken above
			panic(fmt.Sprintf("opaque permutation of tag %q: %v", tag, err))
		}
		// Bounded: a route may name any tag; past the bound a permutation
		// is made afresh on each call. The permutation is a function of the
		// key, the tweak and the tag alone, so caching never changes it.
		if cached.Load() < maxCachedTags {
			if _, loaded := cache.LoadOrStore(tag, p); !loaded {
				cached.Add(1)
			}
		}
		return p
	}, nil
}

// maxCachedTags bounds the permutations TagPermutations keeps: about a
// kilobyte each.
const maxCachedTags = 1024

// tagTweak is the tweak of tag's permutation: SHA-256 over a label, the
// length of opaque.tweak, opaque.tweak and the tag, so that no two
// (tweak, tag) pairs share one.
func tagTweak(tweak, tag string) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "firn segment tag v1\x00%d\x00%s%s", len(tweak), tweak, tag)
	return h.Sum(nil)
}

// SpaceID is how stores record a namespace's ID space: its layout and, in
// opaque mode, the permutation over it (the key's fingerprint and the
// tweak, never the key). Two permutations over one space collide, so a
// namespace recorded with one refuses every other, and plain IDs.
func SpaceID(l snowflake.Layout, p *opaque.Permutation) nodeid.LayoutID {
	// Bits leaves the permutation out: two permutations, or one and
	// plain IDs, over one layout's bits collide.
	id := node.LayoutID(l)
	if p != nil {
		id.Fingerprint += ";" + p.Fingerprint() // 19 + 1 + 33 characters, within nodeid.MaxFingerprint
		id.Description += fmt.Sprintf(", opaque IDs (%s; --opaque --opaque-key-file and --opaque-tweak name it)", p.Fingerprint())
	}
	return id
}
