// Package opaque makes IDs that reveal nothing to whoever does not hold the
// key: a keyed, reversible permutation of a layout's ID space, so that an
// order number no longer tells a competitor the time it was made or how many
// orders came before it.
//
// The permutation is NIST SP 800-38G FF1 (format-preserving encryption, a
// ten-round Feistel network whose round function is AES-CBC-MAC) over the
// numeral strings of radix 2 and length bits: the 2^bits IDs of the space are
// mapped one-to-one onto themselves. [FF1] is the general construction, any
// radix from 2 to 2^16, tested against every sample vector NIST publishes;
// [Permutation] is the radix-2 case over 64-bit words that firn uses on the
// way out, tested against [FF1] at every length it accepts.
//
// Limits, from the standard and from what a permutation is:
//
//   - The domain must hold at least 1,000,000 values (SP 800-38G Rev. 1), so
//     a binary domain needs at least 20 bits; [New] refuses smaller ones.
//   - Unique in, unique out — but only within one permutation. Two keys (or
//     two tweaks) over one ID space are two permutations, and IDs made under
//     one collide with IDs made under the other at the rate of chance (about
//     N_old·N_new/2^bits pairs). An ID space keeps one key and one tweak for
//     its whole life: record [KeyFingerprint] with it and refuse another.
//   - Opaque IDs are not ordered. Anything that compares IDs — a floor, an
//     HWM bound, "largest ID issued" — compares the decoded values.
//   - FF1 hides the value, not the fact that two equal IDs are equal, and it
//     is only as strong as its key: a key is 16, 24 or 32 random bytes, kept
//     out of logs, URLs and configuration dumps.
package opaque
