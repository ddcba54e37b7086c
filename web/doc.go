// Package web is the browser playground's logic: the exact simulator of
// `ratelim sim`, driven by a page instead of a command line. It is pure
// Go that builds for GOOS=js GOARCH=wasm (web/wasm puts it on the page)
// and natively (its tests, and the site's, run it here).
//
// A page's whole state is a State: a built-in's name or a scenario's
// YAML, the settings that make run A of it, those that make run B beside
// A, and whether the page asks for a prediction first. Encode and Decode
// carry it in a URL's fragment, so a permalink is the run.
//
// Playground.Run turns a State into a Response: every figure, table,
// finding and picture the page shows, each made by the function the CLI
// calls for it (simrun for the run, its JSON, table and expectations;
// plots for the SVG; sim for the headline), so that the page's numbers
// are `ratelim sim`'s byte for byte, and Command is the command line that
// reproduces them. Controls are built from the file loaded: what its
// limit, topology, faults and clients let a slider change. Frame cuts the
// last run at an instant, for the page's scrubber.
//
// Nothing here reads a clock, the environment or a file: a built-in is
// opened by name from the embedded set, never from a path a State names.
package web
