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
		Short: "List the limiter algorithms and the peer libraries modelled: their parameters, what each is good and bad at",
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
		peers := false
		for i, a := range all {
			if a.Peer != nil && !peers {
				peers = true
				fmt.Fprintf(opts.Out, "\nPeer models: limiter libraries people deploy, as they decide (flaws included),\neach checked against the library itself or its source's arithmetic.\n")
			}
			if i > 0 {
				fmt.Fprintln(opts.Out)
			}
			fmt.Fprintf(opts.Out, "%-*s  params: %s; per key: %s\n", width, a.Name, strings.Join(a.Params, ", "), a.Memory)
			fmt.Fprintf(opts.Out, "%-*s  + %s\n", width, "", a.Good)
			fmt.Fprintf(opts.Out, "%-*s  - %s\n", width, "", a.Bad)
			if p := a.Peer; p != nil {
				fmt.Fprintf(opts.Out, "%-*s  models %s %s, %s; a %s variant\n", width, "", p.Library, p.Version, p.Source, p.Family)
				fmt.Fprintf(opts.Out, "%-*s  ! %s\n", width, "", p.Quirk)
				if p.Clock == "store" {
					fmt.Fprintf(opts.Out, "%-*s  decides on the store's clock (a server's skew does not reach it)\n", width, "")
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
