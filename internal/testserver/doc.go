// Package testserver starts the real servers tests run against, each on
// free loopback ports: etcd clusters of one or more members a test can kill
// and restart (Etcd; the binary from FIRN_TEST_ETCD), ZooKeeper standalone
// servers and ensembles with their own data directories and a short
// tickTime (ZooKeeper, ZooKeeperEnsemble; the jar from FIRN_TEST_ZOOKEEPER,
// which Debian's zookeeper package puts at /usr/share/java/zookeeper.jar),
// and `firn serve` itself as a subprocess, for end-to-end tests of the
// binary and of the clients that talk to it (Firn). See testenv for when
// they skip.
package testserver
