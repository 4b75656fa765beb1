package zkstore

import "errors"

var (
	// ErrTTLTooShort is returned by Store.Claim when the ensemble grants
	// the claim's session a timeout longer than the TTL asked for: a
	// holder that vanished would keep its node until its session expired
	// (up to about the session timeout plus one tickTime, as ZooKeeper
	// rounds expiry up to a tick), past the TTL the store promised.
	// ZooKeeper grants 2 to 20 ticks.
	ErrTTLTooShort = errors.New("zkstore: TTL shorter than the session timeout the ensemble grants")

	// ErrOutcomeUnknown is returned when a write's answer was lost (a cut
	// connection, a deadline) and a re-read could not tell whether it
	// landed. Nothing is assumed from it: a claim whose write may have
	// landed is abandoned by closing its session, an extension is not
	// confirmed, and a Rerecord's record is to be read again (Record).
	ErrOutcomeUnknown = errors.New("zkstore: outcome of a write unknown")

	// ErrLateWrite is returned by Store.Renew when its extension landed
	// but the lease had ended by the time the answer came (the watchdog
	// closed the session, or the session expired, meanwhile): the stored
	// HWM was raised, yet the lease is not renewed and never revives. It
	// is not nodeid.ErrLeaseLost, which says the store wrote nothing.
	ErrLateWrite = errors.New("zkstore: extension landed after the lease ended")

	// ErrNamespace is returned by New for a namespace that is not one
	// clean absolute ZooKeeper path below the root.
	ErrNamespace = errors.New("zkstore: invalid namespace") // the Kind of a *ConfigError

	// ErrCorrupt is returned when a znode of the namespace holds a value
	// the store did not write (a layout or an HWM it cannot read). Nothing
	// is decided from it: the node, or the namespace, is not taken.
	ErrCorrupt = errors.New("zkstore: corrupt znode")
)

// ConfigError is a setting of Config that New, Znodes or a Check function
// refuses. Callers that name the setting their own way (a flag, a YAML
// key) use Reason; Message is the sentence without the package's name.
type ConfigError struct {
	// Words is what the message calls the setting, or the whole
	// sentence when Reason is empty: "session timeout", "invalid
	// namespace", "no ZooKeeper servers configured".
	Words string
	// Reason is the value and what is wrong with it:
	// "30ms: want 1s to 1m0s", `"/": the root is not a namespace`.
	Reason string
	// Kind is the sentinel the error matches (ErrNamespace), or nil.
	Kind error
}

func (e *ConfigError) Error() string { return "zkstore: " + e.Message() }

// Message is the error's message without the package's name.
func (e *ConfigError) Message() string {
	if e.Reason == "" {
		return e.Words
	}
	return e.Words + " " + e.Reason
}

// Unwrap returns Kind.
func (e *ConfigError) Unwrap() error { return e.Kind }

// ErrVersion is matched by the error of a Tree.Set whose znode was
// written by someone else since the version given was read, and of a
// Tree.BumpChildren whose parent's child version is no longer the one
// given.
var ErrVersion = errors.New("zkstore: znode changed since it was read")
