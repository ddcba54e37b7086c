package main

import (
	"slices"
	"strings"
	"testing"
)

// The shell completion offers the values a command takes: built-in
// scenarios for SCENARIO|FILE, and each flag's choices.
func TestCompletion(t *testing.T) {
	for _, tt := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"sim", ""}, []string{"partition", "runaway-healthcheck"}, nil},
		{[]string{"load", ""}, []string{"store-outage"}, nil},
		{[]string{"scenarios", "show", ""}, []string{"nat"}, nil},
		{[]string{"scenarios", ""}, []string{"list", "show", "reference", "schema"}, nil},
		{[]string{"scenarios", "schema", "-"}, []string{"--output"}, nil},
		{[]string{"sim", "nat", "--algorithm", ""}, []string{"token-bucket", "gcra", "redis_rate"}, nil},
		{[]string{"sim", "nat", "--topology", ""}, []string{"local", "shared", "racy", "split-brain", "cluster"}, nil},
		{[]string{"sim", "nat", "--on-error", ""}, []string{"fail-open", "fail-closed"}, nil},
		{[]string{"sim", "nat", "--key", ""}, []string{"api-key", "ip"}, nil},
		{[]string{"sim", "nat", "--format", ""}, []string{"table", "json", "csv"}, []string{"text"}},
		{[]string{"check", "--format", ""}, []string{"text", "json"}, []string{"csv"}},
		// replay's --key names a log field: no limit keys offered.
		{[]string{"replay", "access.log", "--key", ""}, nil, []string{"api-key"}},
	} {
		code, out, _ := runArgs(append([]string{"__complete"}, tt.args...)...)
		if code != exitOK {
			t.Errorf("%v: exit %d", tt.args, code)
			continue
		}
		lines := strings.Split(out, "\n")
		for i, line := range lines {
			lines[i], _, _ = strings.Cut(line, "\t") // the value, without its description
		}
		for _, w := range tt.want {
			if !slices.Contains(lines, w) {
				t.Errorf("%v: completion %q lacks %q", tt.args, lines, w)
			}
		}
		for _, w := range tt.not {
			if slices.Contains(lines, w) {
				t.Errorf("%v: completion %q offers %q", tt.args, lines, w)
			}
		}
	}
}
