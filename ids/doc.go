// Package ids issues firn's IDs inside an application's own process: a
// snowflake generator on a node leased from a store the application
// already runs — PostgreSQL, MySQL, etcd, ZooKeeper, or a directory of
// one machine — with the node's high-water mark (HWM) kept ahead of every
// ID, so that no two processes of a namespace ever issue one ID, however
// many start, stop, are killed or lose the store.
//
//	src, err := ids.Open(ctx, "postgres", os.Getenv("DATABASE_URL"), ids.Options{Namespace: "orders"})
//	...
//	defer src.Close(ctx)
//	id, err := src.Next(ctx)
//
// Open takes the store by its kind and a DSN, endpoints or a directory;
// FromDB takes a *sql.DB the application has; New takes any node store
// (etcdstore.New over the application's etcd client, say). Each returns
// at once: the node is taken in the background, and calls wait for it.
//
// A store kind is known to Open once its package is imported, as a
// database/sql driver is, so a program links only the clients it uses:
//
//	import _ "github.com/firn-id/firn/sqlstore/postgres" // "postgres"
//	import _ "github.com/firn-id/firn/sqlstore/mysql"    // "mysql"
//	import _ "github.com/firn-id/firn/etcdstore"         // "etcd"
//	import _ "github.com/firn-id/firn/zkstore"           // "zookeeper"
//	import _ "github.com/firn-id/firn/localstore"        // "local"
//
// What a Source does for the caller, as firn serve does for its servers
// (package node):
//
//   - It takes the lowest free node of the namespace's pool; while none
//     is free, the store does not answer, or the clock is behind the
//     node's HWM, it waits and tries again, and Ready says why.
//   - It renews the lease in the background. A generator reaches its HWM
//     only when renewals have failed for a window (3 s): calls then wait
//     for the next renewal rather than issue past it.
//   - A lost lease stops its generator at the HWM the store confirmed;
//     the Source retires it (never revives it), takes a new lease — a new
//     claim, perhaps another node — and calls go on with it, without the
//     caller doing anything.
//   - A call waits for a node until its context ends; a context without a
//     deadline waits at most Options.Wait (DefaultWait). The error then
//     says why no node is held (*NotReadyError).
//   - Close makes waiting calls return ErrClosed at once, lets calls in
//     flight return, then releases the node, so it is free for another
//     process at once; a process killed without Close frees it within
//     the lease's TTL.
//
// The defaults need no reading: the "firn" layout (41 bits of
// milliseconds from 2026, 10 node bits: 1,024 processes per namespace,
// 12 sequence bits: 4,096,000 IDs per second per process), a TTL of 10 s.
// Every process of a namespace must use one layout: the store records it
// at first use and refuses another (nodeid.ErrLayoutMismatch), and a
// firn serve on the same namespace shares its nodes.
package ids
