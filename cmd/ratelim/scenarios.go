package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ratelim/ratelim/report"
	"github.com/ratelim/ratelim/scenarios"
)

type scenariosOptions struct {
	streams
	// Show is the built-in to print as YAML; empty lists them all.
	Show string
	// Reference prints the scenario format's field reference instead.
	Reference bool
	// Schema writes the JSON Schema of a scenario file instead, to Output
	// ("" or "-": standard output).
	Schema bool
	Output string
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
		Use:   "scenarios [list | show NAME | reference | schema]",
		Short: "List the built-in scenarios, print one, or the format's reference",
		Long: `The built-in scenarios each show one thing about rate limiting. List them
with what each teaches, or print one as the YAML file it is: copy it, edit
it, and run your copy with 'ratelim sim FILE'.

'ratelim scenarios reference' describes every field a scenario file may
have; 'ratelim scenarios schema -o ratelim.schema.json' writes its JSON
Schema, for an editor: put

  # yaml-language-server: $schema=ratelim.schema.json

on the first line of a scenario file (the path is relative to the file).`,
		Example: `  ratelim scenarios
  ratelim scenarios show window-boundary > boundary.yaml
  ratelim sim boundary.yaml
  ratelim scenarios reference
  ratelim scenarios schema -o ratelim.schema.json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return run() },
	}
	schema := &cobra.Command{
		Use:   "schema [-o FILE]",
		Short: "Write the JSON Schema of a scenario file (draft-07), for editors",
		Long: `Write the JSON Schema (draft-07) of a scenario file, from the field table
the scenario parser reads, for an editor that runs yaml-language-server (VS
Code's YAML extension, and others): with

  # yaml-language-server: $schema=ratelim.schema.json

on the first line of a scenario file, the editor completes field names and
values and marks an unknown field or value as you type. The parser checks
more than a schema can say (a fault within the run, a partition naming every
server): 'ratelim check FILE' has the last word.`,
		Example: `  ratelim scenarios schema -o ratelim.schema.json
  ratelim scenarios schema > ratelim.schema.json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			opts.Schema = true
			return run()
		},
	}
	schema.Flags().StringVarP(&opts.Output, "output", "o", "", "the file to write, or - for standard output (the default)")
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
	}, &cobra.Command{
		Use:   "reference",
		Short: "Describe every field of a scenario file",
		Long: `Describe every field a scenario file may have: each kind of mapping, its
fields, what each holds (a duration, a rate, one of a fixed set) and what it
means. It is written from the field table the scenario parser reads, so it
names every field the parser takes and no other.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			opts.Reference = true
			return run()
		},
	}, schema)
	return cmd
}

func scenariosRun(opts *scenariosOptions) error {
	switch {
	case opts.Reference:
		return scenarios.Reference(opts.Out)
	case opts.Schema:
		out := opts.Output
		if out == "" {
			out = "-"
		}
		return writeOutput(out, opts.Out, func(w io.Writer) error { return scenarios.Schema(w) })
	}
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
