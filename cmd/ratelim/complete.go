package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/scenarios"
)

// completeValues gives cobra's shell completion (ratelim completion bash,
// zsh, fish) the values the commands take: the built-in scenarios where a
// command takes SCENARIO|FILE (files still complete too), and each flag's
// choices where it has a fixed set. It walks the command tree once, so a
// flag added later under one of these names completes without more code.
func completeValues(root *cobra.Command) {
	scenarioArg := func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveDefault
		}
		return scenarios.Builtin(), cobra.ShellCompDirectiveDefault // a file is a scenario too
	}
	fixed := func(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return values, cobra.ShellCompDirectiveNoFileComp
		}
	}
	// The choices a scenario file's field takes, as its parser lists them;
	// --store also takes the fleet's own redis-server and a Redis URL.
	choices := map[string][]string{
		"algorithm": algorithms.Names(),
		"topology":  scenarios.Choices("topology.kind"),
		"balancer":  scenarios.Choices("balancer"),
		"on-error":  scenarios.Choices("topology.on_error"),
		"clock":     scenarios.Choices("topology.clock"),
		"store":     append(scenarios.Choices("topology.store"), fleetRedis, "redis://"),
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if strings.Contains(c.Use, "SCENARIO|FILE") {
			c.ValidArgsFunction = scenarioArg
		}
		if c.Name() == "show" && c.Parent() != nil && c.Parent().Name() == "scenarios" {
			c.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return scenarios.Builtin(), cobra.ShellCompDirectiveNoFileComp
			}
		}
		for name, values := range choices {
			if c.LocalFlags().Lookup(name) != nil {
				c.RegisterFlagCompletionFunc(name, fixed(values...))
			}
		}
		// A limit's key, except replay's --key, which names a log field.
		if f := c.LocalFlags().Lookup("key"); f != nil && c.Name() != "replay" {
			c.RegisterFlagCompletionFunc("key", fixed(scenarios.Choices("limit.key")...))
		}
		// --format: the formats its help names.
		if f := c.LocalFlags().Lookup("format"); f != nil {
			var formats []string
			for _, w := range strings.FieldsFunc(f.Usage, func(r rune) bool { return !('a' <= r && r <= 'z') }) {
				if slices.Contains([]string{"table", "text", "json", "csv"}, w) && !slices.Contains(formats, w) {
					formats = append(formats, w)
				}
			}
			c.RegisterFlagCompletionFunc("format", fixed(formats...))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
