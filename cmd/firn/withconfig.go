package main

import "flag"

const configFlagUsage = `  --config FILE       firn serve's configuration file (docs/config.md): its store
                      and layout settings apply, FIRN_… variables override them,
                      flags override both; its node does not
`

// withConfig registers --config on fs and sets fs's flags from the
// configuration file (the one firn serve reads) and the FIRN_…
// environment, where they differ from the defaults; the command line then
// overrides them.
func withConfig(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.String("config", "", "")
	cfg, err := loadConfig(args)
	if err != nil {
		return nil, err
	}
	for name, value := range cfg.Changed() {
		// The node in the file is the server's own: never taken over by
		// another command.
		if fs.Lookup(name) == nil || name == "node" {
			continue
		}
		if err := fs.Set(name, value); err != nil {
			return nil, usagef("--config: --%s %s: %s", name, value, err)
		}
	}
	return args, nil
}
