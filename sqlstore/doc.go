// Package sqlstore keeps node IDs, leases and HWMs in PostgreSQL or MySQL
// (MariaDB), for teams that run a database and no etcd.
//
// A namespace is a table plus a namespace column. Leases expire by the
// database's clock at statement time — clock_timestamp() in PostgreSQL,
// UTC_TIMESTAMP(3) in MySQL — never by a transaction's start or by whole
// seconds. Every HWM write is fenced by the acquisition's random token and
// the lease's expiry, and never lowers the stored value. The caller opens
// the *sql.DB with a driver; this package imports none.
//
// The database must not lose confirmed writes: use synchronous commit and,
// with replicas, synchronous replication. After a restore from backup, move
// every node past the last IDs issued with `firn admin advance`.
package sqlstore
