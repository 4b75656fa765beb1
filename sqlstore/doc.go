// Package sqlstore keeps node IDs, leases and HWMs in PostgreSQL or MySQL
// (MariaDB), for teams that run a database and no etcd.
//
// A namespace is a table plus a namespace column. Leases expire by the
// database's clock at statement time — clock_timestamp() in PostgreSQL,
// UTC_TIMESTAMP(3) in MySQL — never by a transaction's start or by whole
// seconds. Every HWM write is fenced by the acquisition's random token and
// the lease's expiry, and never lowers the stored value. The caller opens
// the *sql.DB with a driver (pgx, lib/pq, go-sql-driver/mysql).
//
// A store reads its driver's errors itself (Classify): a value a column
// cannot hold is segment.ErrInvalid, a refused privilege a *PrivilegeError
// naming the GRANT, a missing table is created on first use, and every
// error it does not recognise is an outage. It reads PostgreSQL's through
// the SQLState method pgx's and lib/pq's errors share, and imports the
// MySQL driver for its error type only.
//
// The database must not lose confirmed writes: use synchronous commit and,
// with replicas, synchronous replication. After a restore from backup, move
// every node past the last IDs issued with `firn admin advance`.
package sqlstore
