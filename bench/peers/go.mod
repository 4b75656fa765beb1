module github.com/firn-id/firn/bench/peers

go 1.26.8

replace github.com/firn-id/firn => ../..

require (
	github.com/bwmarrin/snowflake v0.3.0
	github.com/firn-id/firn v0.0.0
	github.com/sony/sonyflake/v2 v2.2.0
	github.com/yitter/idgenerator-go v1.3.3
)

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/oklog/ulid/v2 v2.1.0 // indirect
)
