module github.com/firn-id/firn/test/cluster

go 1.26.8

require github.com/firn-id/firn v0.0.0

replace github.com/firn-id/firn => ../..
