//go:build !playground

package site

// embedded reports that this binary carries no simulator (it was built
// without -tags playground): Build builds one from source.
func embedded() (simulator, bool, error) { return simulator{}, false, nil }
