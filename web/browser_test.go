package web

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBuildsForTheBrowser builds the bridge, web/wasm, for GOOS=js
// GOARCH=wasm, and vets it and the packages it links, which `go build
// ./...` and `go vet ./...` on linux never try (the bridge has no linux
// build at all): an import that does not build for js (tui's bubbletea:
// its terminal code has no js twin) fails go test here, not the
// playground's build later; the imports that build but do not belong
// (os/exec, net/http, Redis) are importrule's. scenarios is built, not
// vetted: go vet reads its test files too, and they make a FIFO
// (syscall.Mkfifo, which js has not). Skipped with -short: cold, it
// compiles the simulator and gonum/plot for wasm (tens of seconds);
// warm, about a second.
func TestBuildsForTheBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiling for GOOS=js GOARCH=wasm takes tens of seconds")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	for _, step := range [][]string{
		{"build", "-o", os.DevNull, "./web/wasm"},
		{"vet", "./web", "./web/wasm", "./simrun", "./sim", "./plots", "./report"},
	} {
		start := time.Now()
		cmd := exec.Command(goTool, step...)
		cmd.Dir = ".." // the module's root
		cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("GOOS=js GOARCH=wasm go %s: %v\n%s", strings.Join(step, " "), err, out)
		}
		t.Logf("GOOS=js GOARCH=wasm go %s: %s", step[0], time.Since(start).Round(time.Millisecond))
	}
}
