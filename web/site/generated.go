package site

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
)

// builtBy finds the Go version in ratelim-wasm.js's first comment.
var builtBy = regexp.MustCompile(`built by (go[0-9A-Za-z.\-+]+)`)

// fromGenerated returns the simulator go generate wrote into gen (an FS
// holding gen/ratelim-wasm.js, gen/wasm_exec.js, gen/page.sha256) and
// true; an error if a file is missing (a -tags playground build without
// go generate) or gen was generated beside other page files than page's
// (web/static changed since: the old simulator and the new page may not
// work together).
func fromGenerated(gen, page fs.FS) (simulator, bool, error) {
	var sim simulator
	var err error
	read := func(name string) []byte {
		b, rerr := fs.ReadFile(gen, "gen/"+name)
		if rerr != nil && err == nil {
			err = rerr
		}
		return b
	}
	sim.wasmExec, sim.wasmJS = read(WasmExecFile), read(WasmFile)
	digest := strings.TrimSpace(string(read(PageDigestFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return sim, false, fmt.Errorf("site: this ratelim was built with -tags playground but without go generate ./web/site: its web/site/gen has no simulator (run go generate ./web/site && go build -tags playground ./cmd/ratelim, or build without -tags playground to build the simulator when run)")
	}
	if err != nil {
		return sim, false, fmt.Errorf("site: the simulator embedded in this ratelim: %w", err)
	}
	files, err := readPage(page)
	if err != nil {
		return sim, false, err
	}
	if want := pageDigest(files); digest != want {
		return sim, false, fmt.Errorf("site: the simulator embedded in this ratelim was generated beside other page files than this ratelim's web/static (digest %.12s, want %.12s), and the two may not work together (run go generate ./web/site && go build -tags playground ./cmd/ratelim again)", digest, want)
	}
	sim.goVersion = "an unknown Go"
	if m := builtBy.FindSubmatch(sim.wasmJS[:min(len(sim.wasmJS), 200)]); m != nil {
		sim.goVersion = string(m[1])
	}
	return sim, true, nil
}
