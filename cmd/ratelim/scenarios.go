package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
)

type scenariosOptions struct {
	streams
	// Show is the built-in to print as YAML; empty lists them all.
	Show string
}

func newCmdScenarios(s streams, runF func(*scenariosOptions) error) *cobra.Command {
	opts := &scenariosOptions{streams: s}
	run := func() error {
		if runF != nil {
			return runF(opts)
		}
		return scenariosRun(opts)
	}
	cmd := &cobra.Command{
		Use:   "scenarios [list | show NAME]",
		Short: "List the built-in scenarios, or print one as YAML to copy and edit",
		Long: `The built-in scenarios each show one thing about rate limiting. List them
with what each teaches, or print one as the YAML file it is: copy it, edit
it, and run your copy with 'ratelim sim FILE'.`,
		Example: `  ratelim scenarios
  ratelim scenarios show window-boundary > boundary.yaml
  ratelim sim boundary.yaml`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return run() },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the built-in scenarios with what each teaches",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return run() },
	}, &cobra.Command{
		Use:   "show NAME",
		Short: "Print a built-in scenario's YAML, exactly as it is built in",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Show = args[0]
			return run()
		},
	})
	return cmd
}

func scenariosRun(opts *scenariosOptions) error {
	names := scenarios.Builtin()
	if opts.Show != "" {
		known := false
		for _, n := range names {
			known = known || n == opts.Show
		}
		if !known {
			return badInput("%s", scenarios.UnknownBuiltin(opts.Show))
		}
		f, err := scenarios.Open(opts.Show)
		if err != nil {
			return err
		}
		_, err = opts.Out.Write(f.Source)
		return err
	}
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		f, err := scenarios.Open(n)
		if err != nil {
			return err
		}
		for i, line := range report.Wrap(f.Scenario.Summary, 80-width-2) {
			name := n
			if i > 0 {
				name = ""
			}
			fmt.Fprintf(opts.Out, "%-*s  %s\n", width, name, line)
		}
	}
	return nil
}
