package main

// Every kind of store the binary opens: each package registers its row
// of the store table (package store) and, for a SQL database, its
// driver. A store the binary offers is one import here.
import (
	_ "github.com/firn-id/firn/etcdstore"
	_ "github.com/firn-id/firn/localstore"
	_ "github.com/firn-id/firn/sqlstore/mysql"
	_ "github.com/firn-id/firn/sqlstore/postgres"
	_ "github.com/firn-id/firn/zkstore"
)
