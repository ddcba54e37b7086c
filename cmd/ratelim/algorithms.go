package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratelim/ratelim/algorithms"
	"github.com/ratelim/ratelim/report"
)

type algorithmsOptions struct {
	streams
	Format string // table | json
}

func newCmdAlgorithms(s streams, runF func(*algorithmsOptions) error) *cobra.Command {
	opts := &algorithmsOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "algorithms",
		Short: "List the algorithms and peer models: parameters, strengths, limits",
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
	all := algorithms.Catalog()
	switch opts.Format {
	case "table":
		width := 0
		for _, a := range all {
			width = max(width, len(a.Name))
		}
		// Each entry for an 80-column terminal: the name and its
		// parameters, then lines under a mark (+ good, - bad, ! quirk),
		// each wrapped under its own text.
		line := func(name, mark, text string) {
			lead := fmt.Sprintf("%-*s  ", width, name)
			if mark != "" {
				lead += mark + " "
			}
			indent := strings.Repeat(" ", len(lead))
			if name != "" {
				indent = strings.Repeat(" ", width+2)
			}
			for _, part := range report.Wrap(text, 80-len(lead)) {
				fmt.Fprintf(opts.Out, "%s%s\n", lead, part)
				lead = indent
			}
		}
		peers := false
		for i, a := range all {
			if i > 0 {
				fmt.Fprintln(opts.Out)
			}
			if a.Peer != nil && !peers {
				peers = true
				fmt.Fprintf(opts.Out, "Peer models: limiter libraries people deploy, deciding as they do,\nflaws included; each checked against the library or its source.\n\n")
			}
			line(a.Name, "", fmt.Sprintf("params: %s; per key: %s", strings.Join(a.Params, ", "), a.Memory))
			line("", "+", a.Good)
			line("", "-", a.Bad)
			if p := a.Peer; p != nil {
				line("", "!", p.Quirk)
				line("", "=", fmt.Sprintf("models %s %s, %s; a %s variant", p.Library, p.Version, p.Source, p.Family))
				if p.Clock == "store" {
					line("", "=", "decides on the store's clock: a server's skew does not reach it")
				}
			}
		}
		return nil
	case "json":
		type peer struct {
			Library string `json:"library"`
			Version string `json:"version"`
			Source  string `json:"source"`
			Family  string `json:"family"`
			Quirk   string `json:"quirk"`
			Clock   string `json:"clock,omitempty"`
		}
		type entry struct {
			Name   string   `json:"name"`
			Params []string `json:"params"`
			Memory string   `json:"memory_per_key"`
			Good   string   `json:"good"`
			Bad    string   `json:"bad"`
			Peer   *peer    `json:"peer,omitempty"`
		}
		out := make([]entry, len(all))
		for i, a := range all {
			out[i] = entry{Name: a.Name, Params: a.Params, Memory: a.Memory, Good: a.Good, Bad: a.Bad}
			if p := a.Peer; p != nil {
				out[i].Peer = &peer{p.Library, p.Version, p.Source, p.Family, p.Quirk, p.Clock}
			}
		}
		enc := json.NewEncoder(opts.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	return checkFormat(opts.Format, "table", "json")
}
