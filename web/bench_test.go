package web

import (
	"context"
	"io"
	"testing"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/simrun"
)

// BenchmarkRunBuiltin is what the page does on a slider's change: Run
// of a built-in, its result, table and timeline SVG, for each built-in.
// Read it against BenchmarkSimOnly, the same runs' JSON alone: their
// ratio is what the page's drawing costs over the CLI's run.
func BenchmarkRunBuiltin(b *testing.B) {
	for _, info := range Builtins() {
		b.Run(info.Name, func(b *testing.B) {
			var p Playground
			for b.Loop() {
				if resp := p.Run(context.Background(), State{Builtin: info.Name}); resp.Error != nil {
					b.Fatal(resp.Error.Text)
				}
			}
		})
	}
}

// BenchmarkSimOnly is simrun.Run of each built-in, JSON alone, within
// the playground's bounds: `ratelim sim NAME --format json`'s work.
func BenchmarkSimOnly(b *testing.B) {
	for _, info := range Builtins() {
		b.Run(info.Name, func(b *testing.B) {
			f, err := scenarios.Open(info.Name)
			if err != nil {
				b.Fatal(err)
			}
			opts := simrun.Options{File: f, Sim: simOptions(), Layout: simrun.Layout{Format: "json"}}
			for b.Loop() {
				if _, err := simrun.Run(context.Background(), io.Discard, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
