package main

var configFlagUsage = ownFlags([2]string{"--config FILE", "firn serve's configuration file (docs/config.md): the " +
	"settings this command takes apply, FIRN_… variables override them, flags override both; the others, and its node, are ignored"})
