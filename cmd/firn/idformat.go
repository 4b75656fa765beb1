package main

import (
	"context"
	"strconv"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/wide"
)

// idFormat is a form firn next prints IDs in: the route a server draws
// them from, and the check of each line it answers.
type idFormat struct {
	name string
	path string
	line idLine
}

var idFormats = []idFormat{
	{name: "snowflake", path: "/v1/snowflake/batch", line: decimalID},
	{name: "uuid", path: "/v1/uuid/batch", line: idLine{size: 37, valid: func(s string) bool {
		u, err := uuid.Parse(s)
		return err == nil && len(s) == 36 && u.Version() == 7
	}}},
	{name: "ulid", path: "/v1/ulid/batch", line: idLine{size: 27, valid: func(s string) bool {
		_, err := ulid.ParseStrict(s)
		return err == nil
	}}},
}

func parseIDFormat(name string) (idFormat, error) {
	for _, f := range idFormats {
		if f.name == name {
			return f, nil
		}
	}
	return idFormat{}, usagef("--format %q: want snowflake, uuid or ulid", name)
}

// drawer makes up to k IDs, appending each and a newline to b.
type drawer func(ctx context.Context, k int, b []byte) ([]byte, int, error)

// drawer returns the drawer of f over g.
func (f idFormat) drawer(g *snowflake.Generator) (drawer, error) {
	if f.name == "snowflake" {
		ids := make([]int64, 4096)
		return func(ctx context.Context, k int, b []byte) ([]byte, int, error) {
			n, err := g.NextN(ctx, ids[:k])
			for _, id := range ids[:n] {
				b = append(strconv.AppendInt(b, id, 10), '\n')
			}
			return b, n, err
		}, nil
	}
	w, err := wide.New(g)
	if err != nil {
		return nil, err
	}
	if f.name == "uuid" {
		return wideDrawer(w.NextUUIDs), nil
	}
	return wideDrawer(w.NextULIDs), nil
}

func wideDrawer[T interface{ String() string }](fill func(context.Context, []T) (int, error)) drawer {
	ids := make([]T, 4096)
	return func(ctx context.Context, k int, b []byte) ([]byte, int, error) {
		n, err := fill(ctx, ids[:k])
		for _, id := range ids[:n] {
			b = append(append(b, id.String()...), '\n')
		}
		return b, n, err
	}
}
