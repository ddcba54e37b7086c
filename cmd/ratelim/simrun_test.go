package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/ratelim/ratelim/scenarios"
	"github.com/ratelim/ratelim/simrun"
)

// TestSimJSONIsSimrun checks, for every built-in, that `ratelim sim NAME
// --format json` prints byte for byte what simrun.Run writes for the
// file as read: the CLI and the browser playground give the same numbers.
func TestSimJSONIsSimrun(t *testing.T) {
	names := scenarios.Builtin()
	if testing.Short() {
		names = names[:3]
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runArgs("sim", name, "--format", "json")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			file, err := scenarios.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if _, err := simrun.Run(context.Background(), &want, simrun.Options{File: file, Layout: simrun.Layout{Format: "json"}}); err != nil {
				t.Fatal(err)
			}
			if out != want.String() {
				t.Errorf("ratelim sim %s --format json wrote %d bytes, simrun.Run %d: they differ", name, len(out), want.Len())
			}
		})
	}
}
