package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, tt := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "unknown (built without module information)"},
		{"go install @v1.2.0", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"}}, true, "v1.2.0 go1.26.8"},
		{"a checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", "72177ffabcdef0123456789", "vcs.time", "2026-12-05T18:00:00Z", "vcs.modified", "false")}, true,
			"(devel) 72177ffabcde (2026-12-05T18:00:00Z) go1.26.8"},
		{"a modified checkout", &debug.BuildInfo{GoVersion: "go1.26.8",
			Settings: vcs("vcs.revision", "72177ff", "vcs.modified", "true")}, true, "(devel) 72177ff+modified go1.26.8"},
	} {
		if got := version(tt.info, tt.ok); got != tt.want {
			t.Errorf("%s: version = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// --version and the version command print the same line.
func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, errOut := runArgs(args...)
		if code != exitOK || !strings.HasPrefix(out, "ratelim ") || !strings.Contains(out, "go1.") || errOut != "" {
			t.Errorf("%v: exit %d, out %q, err %q; want 0 and \"ratelim VERSION ... goX\"", args, code, out, errOut)
		}
	}
}
