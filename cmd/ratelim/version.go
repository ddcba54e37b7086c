package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version says which ratelim this is, from what the Go toolchain recorded
// in the binary: the module's version ("v1.2.0" from go install ...@v1.2.0,
// "(devel)" from a checkout), the VCS revision and whether the tree had
// uncommitted changes, and the Go version. A figure someone reports is
// then tied to the code that made it.
func version(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "unknown (built without module information)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " " + rev
		if modified {
			v += "+modified"
		}
		if when != "" {
			v += " (" + when + ")"
		}
	}
	return v + " " + info.GoVersion
}

// newCmdVersion prints version, as --version does.
func newCmdVersion(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ratelim's version, VCS revision and Go version",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(s.Out, "ratelim", version(debug.ReadBuildInfo()))
			return err
		},
	}
}
