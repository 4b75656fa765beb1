module github.com/firn-id/firn

go 1.26.8
