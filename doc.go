// Package firn issues unique, time-ordered 64-bit IDs for systems that have
// outgrown one database. This package holds only documentation and the
// repository's own tests; the code lives in its packages:
//
//   - snowflake: layouts as data (presets for Twitter, Discord, Instagram,
//     Sonyflake, Baidu's uid-generator, firn's own and more to decode), the
//     generator, decoding, and guessing the layout of an ID in the wild.
//   - nodeid: node-ID leases that keep each node's high-water mark (HWM)
//     ahead of its generator, and the Store interface they run on; its
//     nodeidtest package holds the stores' conformance suite.
//   - node: a node held for a serving process — acquired, watched, replaced
//     by a new lease when lost, each new generator checked before it
//     serves, released after the servers stop.
//   - ids: firn inside an application's process, on the store it already
//     runs: one call, then Next; the node leased, renewed and retaken.
//   - segment: segment mode, dense IDs per tag from ranges reserved in a
//     store; its segmenttest package holds the stores' conformance suite.
//   - localstore: the single-machine store, a locked data directory.
//   - sqlstore: node IDs and segments in PostgreSQL or MySQL (Leaf's and
//     Tinyid's tables).
//   - etcdstore: node IDs and segments in etcd.
//   - zkstore: node IDs on ZooKeeper (no segments).
//   - site: sites, each with a registry of its own: the ledger of site
//     values, and the claims and releases that provision them.
//   - migrate: the plan of a switch from Leaf, Tinyid or uid-generator,
//     read from their databases, and the recording of its floor.
//   - wide: UUIDv7 and ULID from a generator's slots, and the decoder of
//     UUIDs, ULIDs, ObjectIds, KSUIDs and xids.
//   - opaque: NIST SP 800-38G FF1 and the 64-bit permutation behind opaque
//     IDs, which show neither time nor count without the key.
//   - idtext: fixed-width base62 and Crockford base32 forms of an ID.
//   - client: the Go client, with its local buffer, hedging and failover;
//     client/clientprom exports its counters to Prometheus.
//   - server: the HTTP and gRPC adapters over a generator and an allocator.
//   - api: the JSON bodies of the HTTP API, defined once for server and
//     client.
//   - firnpb: the gRPC service definition and its generated code.
//   - cmd/firn: the firn command.
//
// docs/design.md gives the safety argument; README.md the tour.
package firn
