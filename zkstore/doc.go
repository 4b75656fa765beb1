// Package zkstore keeps node IDs, leases and HWMs in ZooKeeper, for shops
// whose coordination service it is.
//
// A namespace is a path (such as /firn/orders). Under it, per node N:
//
//	owner/N   persistent; the token of the last claim. Every claim sets it,
//	          so its version names the current owner.
//	hwm/N     persistent; N's HWM in Unix milliseconds. It outlives every
//	          claim.
//	held/N    ephemeral, of the holding claim's own session; its token.
//
// and layout, the namespace's record (nodeid.Recorder): the layout its
// first claim recorded, or a site's or a ledger's record that Rerecord
// wrote, as the fingerprint, quoted, a newline and the description; and
// reserved, the namespace's reservation (nodeid.Reserver) as JSON: nodes
// no claim takes, and a floor under every claim's HWM.
//
// A claim is one Multi: check layout at the version whose record the
// claimant compared, create held/N, set owner/N at the version the
// claimant read, and check hwm/N at the version whose value becomes the
// claim's HWM, and check reserved at the version whose reservation the
// claim obeyed. An extension is one Multi: check owner/N's version (the
// current owner), check held/N, check layout at the claim's version, and
// set hwm/N. A compare-and-set on the HWM's own version alone would let
// a paused former owner, reconnected on a new session after a takeover
// but before the new owner's first write, raise the HWM under the new
// owner; the owner check refuses it. Rerecord sets layout, so no claim or
// extension taken under the record it replaced lands after it: one write
// ends every lease of the namespace (a site's release). Reads a decision
// rests on follow a Sync.
//
// A ZooKeeper session is not a lease: the client pings on its own, so an
// ephemeral node lives as long as the connection. The lease is firn's:
// every claim has a session of its own, which the store closes (deleting
// held/N) when Renew has not confirmed a write within the TTL. Claim
// refuses a TTL shorter than the session timeout the ensemble grants
// (ZooKeeper's minimum is two ticks): a vanished holder keeps its node
// until its session expires, which ZooKeeper rounds up to a tick, so for
// up to about the TTL plus one tickTime. A session that expires, or that the client replaces by
// a new one, is a lost lease at once: nothing is carried over to the new
// session. A write whose answer was lost is re-read after a Sync before
// anything is decided on it. Renew answers nodeid.ErrLeaseLost, which
// says nothing was written, only when its write did not land; one that
// landed after the lease ended is ErrLateWrite, one that may have landed
// ErrOutcomeUnknown.
//
// With Config.Digest every znode the store creates under the namespace
// carries an ACL of that identity alone; without it anyone who reaches
// the ensemble can rewrite an HWM, and Store.Exposed says so. Digest
// credentials travel in clear unless Config.TLS connects to the servers'
// TLS port.
//
// There is no segment store on ZooKeeper.
package zkstore
