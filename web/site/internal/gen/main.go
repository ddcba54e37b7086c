// Command gen builds the playground's simulator from the checkout it runs
// in and writes ratelim-wasm.js and wasm_exec.js into a directory (-o),
// for web/site's embedded.go, with page.sha256, the digest of the page
// files (the checkout's web/static) it was built beside: `go generate
// ./web/site` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/ratelim/ratelim/internal/outfile"
	"github.com/ratelim/ratelim/web/site"
)

func main() {
	out := flag.String("o", "gen", "the directory to write the two files into")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := generate(ctx, *out)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func generate(ctx context.Context, dir string) error {
	s, err := site.Build(ctx, site.Options{Progress: os.Stderr, Rebuild: true})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{site.PageDigestFile: []byte(s.PageDigest() + "\n")}
	files[site.WasmFile], _ = s.File(site.WasmFile)
	files[site.WasmExecFile], _ = s.File(site.WasmExecFile)
	// The digest last, so that it is never newer than the simulator
	// beside it.
	for _, name := range []string{site.WasmFile, site.WasmExecFile, site.PageDigestFile} {
		b := files[name]
		path := filepath.Join(dir, name)
		if err := outfile.Write(path, nil, func(w io.Writer) error {
			_, err := w.Write(b)
			return err
		}); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s (%d bytes)\n", path, len(b))
	}
	return nil
}
