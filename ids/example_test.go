package ids_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/firn-id/firn/etcdstore"
	"github.com/firn-id/firn/ids"
	_ "github.com/firn-id/firn/localstore"
	"github.com/firn-id/firn/sqlstore"
	_ "github.com/firn-id/firn/sqlstore/mysql"
	_ "github.com/firn-id/firn/sqlstore/postgres"
	_ "github.com/firn-id/firn/zkstore"
)

// An application on PostgreSQL: one call, then Next wherever an ID is
// needed, and Close on the way out, which frees the node at once.
func Example_postgres() {
	ctx := context.Background()
	src, err := ids.Open(ctx, "postgres", os.Getenv("DATABASE_URL"), ids.Options{Namespace: "orders"})
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close(ctx)

	id, err := src.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id > 0)
}

// An application on MySQL or MariaDB, with a go-sql-driver/mysql DSN.
func Example_mysql() {
	ctx := context.Background()
	src, err := ids.Open(ctx, "mysql", os.Getenv("MYSQL_DSN"), ids.Options{Namespace: "orders"})
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close(ctx)

	batch := make([]int64, 100)
	n, err := src.NextN(ctx, batch)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n > 0, batch[0] < batch[n-1] || n == 1)
}

// An application that has its *sql.DB already: the node table lives in
// its database, beside its own tables.
func ExampleFromDB() {
	ctx := context.Background()
	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	sqlstore.Embed(db) // the pool serves firn alone: no connection kept between renewals

	src, err := ids.FromDB(db, sqlstore.Postgres, ids.Options{Namespace: "invoices"})
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close(ctx)

	u, err := src.NextUUID(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.Version())
}

// An application with an etcd client of its own: the namespace is a key
// prefix.
func ExampleNew() {
	ctx := context.Background()
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(os.Getenv("ETCD_ENDPOINTS"), ",")})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()

	src, err := ids.New(etcdstore.New(cli, "/firn/orders/"), ids.Options{Namespace: "etcd /firn/orders/"})
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close(ctx)

	id, err := src.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id > 0)
}

// An application on ZooKeeper: firn keeps a session of its own, which its
// lease rests on.
func Example_zooKeeper() {
	ctx := context.Background()
	src, err := ids.Open(ctx, "zookeeper", os.Getenv("ZOOKEEPER_SERVERS"), ids.Options{Namespace: "/firn/orders"})
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close(ctx)

	id, err := src.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id > 0)
}

// One machine, no server: a data directory (systemd's StateDirectory=
// sets STATE_DIRECTORY). The user's node directory keeps it apart from
// every other data directory of the user.
func Example_local() {
	ctx := context.Background()
	src, err := ids.Open(ctx, "local", os.Getenv("STATE_DIRECTORY"), ids.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close(ctx)

	u, err := src.NextULID(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(u.String()))
}
