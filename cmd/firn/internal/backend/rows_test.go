package backend_test

// The store table's rows, which the binary registers as these tests do.
import (
	_ "github.com/firn-id/firn/etcdstore"
	_ "github.com/firn-id/firn/localstore"
	_ "github.com/firn-id/firn/sqlstore/mysql"
	_ "github.com/firn-id/firn/sqlstore/postgres"
	_ "github.com/firn-id/firn/zkstore"
)
