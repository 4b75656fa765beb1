package snowflake_test

import (
	"context"
	"fmt"
	"time"

	"github.com/firn-id/firn/snowflake"
)

// Decode an ID from Discord's developer documentation.
func ExampleLayout_Decompose() {
	discord, _ := snowflake.Preset("discord")
	p, err := discord.Decompose(175928847299117063)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Time.Format("2006-01-02T15:04:05.000Z07:00"))
	for _, f := range p.Fields {
		fmt.Println(f.Name, f.Value)
	}
	fmt.Println("sequence", p.Sequence)
	// Output:
	// 2016-04-30T11:18:25.796Z
	// worker 1
	// process 0
	// sequence 7
}

func ExampleLayout_Capacity() {
	c := snowflake.DefaultLayout().Capacity()
	fmt.Println("last tick:", c.Last.Format("2006-01-02"))
	fmt.Println("nodes:", c.Nodes)
	fmt.Printf("per node: %.0f IDs/s\n", c.PerSecond)
	// Output:
	// last tick: 2095-09-07
	// nodes: 1024
	// per node: 4096000 IDs/s
}

func ExampleLayout_Validate() {
	// The 37+20+16-bit "game server" layout does not fit.
	game := snowflake.DefaultLayout()
	game.Name = "game"
	game.TimeBits, game.Node, game.SequenceBits = 37, []snowflake.Field{{Name: "server", Bits: 20}}, 16
	fmt.Println(game.Validate())
	// Output:
	// snowflake: layout game: 37 time + 20 node + 16 sequence = 73 bits, over 64
}

func ExampleLayout_NodeValue() {
	twitter, _ := snowflake.Preset("twitter")
	node, _ := twitter.NodeValue(3, 17) // datacenter 3, worker 17
	id, _ := twitter.Compose(1, node, 5)
	fmt.Println(id)
	// Output:
	// 4657157
}

func ExampleNew() {
	// Unreserved: no protection across restarts. Servers use a nodeid lease.
	g, err := snowflake.New(snowflake.Config{Node: 1, Reservation: snowflake.Unreserved()})
	if err != nil {
		panic(err)
	}
	id, _ := g.Next(context.Background())
	p, _ := g.Layout().Decompose(uint64(id))
	fmt.Println("node", p.Node)
	// Output:
	// node 1
}

func ExampleLayout_ExhaustedAt() {
	l, _ := snowflake.Preset("baidu")
	since, exhausted := l.ExhaustedAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(exhausted, since.Format(time.DateOnly))
	_, exhausted = snowflake.DefaultLayout().ExhaustedAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(exhausted)
	// Output:
	// true 2024-11-20
	// false
}

// Which systems could have made an ID? The example status of Mastodon's
// API documentation reads as a Mastodon ID, and also as a Discord ID from
// 2015: Guess names every plausible layout.
func ExampleGuess() {
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	ranked := snowflake.Guess(103270115826048975, now)
	for _, c := range snowflake.Plausible(ranked) {
		if c.Layout.Name == "mastodon" || c.Layout.Name == "discord" {
			fmt.Println(c.Layout.Name, c.Layout.FormatTime(c.Parts.Time))
		}
	}
	fmt.Println(len(snowflake.Plausible(ranked)) > 1)
	// Output:
	// mastodon 2019-12-08T03:48:33.849Z
	// discord 2015-10-12T23:18:34.278Z
	// true
}

func ExampleLayout_Diagram() {
	twitter, _ := snowflake.Preset("twitter")
	fmt.Print(twitter.Diagram())
	// Output:
	// +------+---------+--------------+----------+-------------+
	// | sign | time 41 | datacenter 5 | worker 5 | sequence 12 |
	// +------+---------+--------------+----------+-------------+
	//    63     62-22       21-17        16-12        11-0
}
