//go:build playground

package site

import "embed"

// generated holds the simulator as `go generate ./web/site` wrote it into
// gen/: a ratelim built with -tags playground serves the playground with
// no Go toolchain at run time. gen/README.md is committed, so that the
// pattern matches in a fresh clone and a build without go generate
// compiles, and says when run what it lacks.
//
//go:embed gen
var generated embed.FS

// embedded returns the generated simulator and true, or an error (see
// fromGenerated).
func embedded() (simulator, bool, error) { return fromGenerated(generated, pageFS) }
