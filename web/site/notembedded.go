//go:build !playground

package site

// embedded reports that this binary carries no simulator (it was built
// without -tags playground): Build builds one from source.
func embedded() (wasmExec, wasmJS []byte, goVersion string, ok bool) { return nil, nil, "", false }
