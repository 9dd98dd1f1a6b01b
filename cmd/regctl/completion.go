package main

import "github.com/regctl/regctl/internal/completion"

// completionFlags hands shell completion (internal/completion) the flags
// typed so far, which cobra parses into g before it completes.
func (g *globalOptions) completionFlags() completion.Flags {
	return completion.Flags{Config: g.sessionConfig(), Verbosity: g.Verbosity, EtcdGiven: g.sessionConfig().EtcdGiven()}
}
