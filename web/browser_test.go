package web

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBuildsForTheBrowser builds and vets web and its bridge, web/wasm,
// for GOOS=js GOARCH=wasm, which `go build ./...` and `go vet ./...` on
// linux never try (the bridge has no linux build at all), so that a
// change that breaks the page's build fails go test here. Skipped with
// -short, as simrun's is: cold, it compiles the simulator and gonum/plot
// for wasm (tens of seconds); warm, about a second.
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
		{"vet", "./web", "./web/wasm"},
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
