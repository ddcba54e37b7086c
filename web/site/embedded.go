//go:build playground

package site

import (
	"embed"
	"regexp"
)

// generated holds the simulator's two files as `go generate ./web/site`
// wrote them (gen/, which git ignores): a ratelim built with -tags
// playground serves the playground with no Go toolchain at run time.
// Without them this file does not build, and says so: run go generate
// first.
//
//go:embed gen/ratelim-wasm.js gen/wasm_exec.js
var generated embed.FS

// builtBy finds the Go version in ratelim-wasm.js's first comment.
var builtBy = regexp.MustCompile(`built by (go[0-9A-Za-z.\-+]+)`)

// embedded returns the generated files, the Go that built them, and
// true.
func embedded() (wasmExec, wasmJS []byte, goVersion string, ok bool) {
	wasmExec, err := generated.ReadFile("gen/" + WasmExecFile)
	if err != nil {
		return nil, nil, "", false
	}
	wasmJS, err = generated.ReadFile("gen/" + WasmFile)
	if err != nil {
		return nil, nil, "", false
	}
	goVersion = "an unknown Go"
	if m := builtBy.FindSubmatch(wasmJS[:min(len(wasmJS), 200)]); m != nil {
		goVersion = string(m[1])
	}
	return wasmExec, wasmJS, goVersion, true
}
