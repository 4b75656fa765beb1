package api_test

import (
	"encoding/json"
	"fmt"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/snowflake"
)

// The node fields keep the layout's order, most significant first, both
// ways.
func ExampleNewDecoded() {
	discord, _ := snowflake.Preset("discord")
	const id = 175928847299117063
	p, _ := discord.Decompose(id)
	b, _ := json.Marshal(api.NewDecoded(id, p))
	fmt.Println(string(b))

	var d api.Decoded
	_ = json.Unmarshal(b, &d)
	worker, _ := d.Node.Get("worker")
	fmt.Println(d.Node[0].Name, worker)
	// Output:
	// {"id":"175928847299117063","unix_ms":1462015105796,"time":"2016-04-30T11:18:25.796Z","tick":41944705796,"node":{"worker":1,"process":0},"sequence":7}
	// worker 1
}
