package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratelim/ratelim/algorithms"
)

type algorithmsOptions struct {
	streams
	Format string // table | json
}

func newCmdAlgorithms(s streams, runF func(*algorithmsOptions) error) *cobra.Command {
	opts := &algorithmsOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "algorithms",
		Short: "List the limiter algorithms, their parameters, and what each is good and bad at",
		Example: `  ratelim algorithms
  ratelim algorithms --format json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if runF != nil {
				return runF(opts)
			}
			return algorithmsRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "table", "output format: table or json")
	return cmd
}

func algorithmsRun(opts *algorithmsOptions) error {
	switch opts.Format {
	case "table":
		width := 0
		for _, a := range algorithms.Catalog() {
			width = max(width, len(a.Name))
		}
		for i, a := range algorithms.Catalog() {
			if i > 0 {
				fmt.Fprintln(opts.Out)
			}
			fmt.Fprintf(opts.Out, "%-*s  params: %s; per key: %s\n", width, a.Name, strings.Join(a.Params, ", "), a.Memory)
			fmt.Fprintf(opts.Out, "%-*s  + %s\n", width, "", a.Good)
			fmt.Fprintf(opts.Out, "%-*s  - %s\n", width, "", a.Bad)
		}
		return nil
	case "json":
		type entry struct {
			Name   string   `json:"name"`
			Params []string `json:"params"`
			Memory string   `json:"memory_per_key"`
			Good   string   `json:"good"`
			Bad    string   `json:"bad"`
		}
		out := make([]entry, len(algorithms.Catalog()))
		for i, a := range algorithms.Catalog() {
			out[i] = entry{a.Name, a.Params, a.Memory, a.Good, a.Bad}
		}
		enc := json.NewEncoder(opts.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	return checkFormat(opts.Format, "table", "json")
}
