// Package static holds the playground's page, as its files are: the
// HTML, the stylesheet and the script, which load the simulator from the
// two files web/site adds beside them (wasm_exec.js, ratelim-wasm.js).
// They are embedded here because go:embed cannot reach a parent
// directory: web/site, which assembles, exports and serves the site, reads
// them through FS. Only the page's files belong in this directory.
package static

import "embed"

// FS holds index.html, playground.css and playground.js.
//
//go:embed *.html *.css *.js
var FS embed.FS
