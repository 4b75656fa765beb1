// Package legacytest holds the tables of the systems firn takes over, as
// they ship them — Meituan Leaf's segment table, Didi Tinyid's tables,
// Baidu uid-generator's WORKER_NODE table — and a stand-in for a Leaf
// snowflake instance on ZooKeeper (Snowflake), for the tests of every
// package that serves or reads them.
package legacytest
