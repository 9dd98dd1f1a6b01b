package main

import "github.com/regctl/regctl/internal/completion"

// completionFlags hands shell completion (internal/completion) the flags
// typed so far, which cobra parses into g before it completes. Completion
// warns of nothing: the shell would show it as a candidate.
func (g *globalOptions) completionFlags() completion.Flags {
	cfg := g.sessionConfig()
	cfg.Warn = nil
	return completion.Flags{Config: cfg, Verbosity: g.Verbosity, EtcdGiven: cfg.EtcdGiven()}
}
