package site

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
)

// Module is ratelim's module path: the go.mod Build looks for, and the
// module it downloads for a released binary.
const Module = "github.com/ratelim/ratelim"

// WasmPackage is the package Build compiles for the browser, named from
// the module's root.
const WasmPackage = "./web/wasm"

// BuildTags are the tags the WebAssembly is built with: gonum/plot's
// "minimal", which leaves out the blank imports of its PNG, PDF, EPS and
// TeX backends (the page draws SVG alone; plots' own PNG path is left out
// of a js build by a file of its own). They only shrink the file: the
// simulator, and every figure the page draws, are the same without them.
const BuildTags = "minimal"

// Options say how Build makes the site.
type Options struct {
	// Progress, when set, is told what Build does that takes a while
	// (building the WebAssembly: 20–40 s the first time, a few seconds
	// once Go's build cache holds it).
	Progress io.Writer
	// Dir is where Build starts looking for ratelim's source (its go.mod,
	// here or in a parent directory); "" is the working directory.
	Dir string
	// Go is the go command; "" finds "go" on PATH.
	Go string
	// Rebuild builds the WebAssembly from source even when this binary
	// carries it embedded (built with -tags playground): what go generate
	// does.
	Rebuild bool
}

// Build makes the site. Its five files come from one place, in order of
// preference:
//
//  1. from this binary, if it was built with -tags playground after `go
//     generate ./web/site` (embedded.go): no Go toolchain is needed. The
//     page is this binary's web/static, and gen/ must have been
//     generated beside the same page files (PageDigestFile), else Build
//     refuses and says to generate again;
//  2. else from source: `go build -trimpath -buildvcs=false -tags minimal
//     -ldflags='-s -w' -o TMP/ratelim.wasm ./web/wasm` with GOOS=js
//     GOARCH=wasm, in ratelim's module root, and wasm_exec.js from that
//     Go's GOROOT/lib/wasm, and the page from the root's web/static (not
//     this binary's: the page and the simulator are one program, and a
//     clone may be at another commit). The root is the first directory from
//     opts.Dir upwards whose go.mod is ratelim's; failing that, for a
//     released ratelim (go install ...@v1.2.0), the source of that version
//     from Go's module cache (`go mod download -json`).
//
// An error says what to do: install Go, run from a clone, or build
// ratelim with the playground inside. ctx stops a build under way.
func Build(ctx context.Context, opts Options) (*Site, error) {
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	if !opts.Rebuild {
		sim, ok, err := embedded()
		if err != nil {
			return nil, err
		}
		if ok {
			page, err := readPage(pageFS)
			if err != nil {
				return nil, err
			}
			return newSite(page, sim, "embedded in this ratelim (built by "+sim.goVersion+")"), nil
		}
	}
	goTool, err := findGo(opts.Go)
	if err != nil {
		return nil, err
	}
	root, err := moduleRoot(ctx, goTool, opts.Dir)
	if err != nil {
		return nil, err
	}
	// The page from the same tree as the simulator: the two are one
	// program, and a binary's own page files may be from another commit
	// than the clone it is run in.
	page, err := readPage(os.DirFS(filepath.Join(root, "web", "static")))
	if err != nil {
		return nil, err
	}
	env, err := goEnv(ctx, goTool, root)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "building the playground's WebAssembly with %s (20–40 s the first time, a few seconds from Go's build cache)…\n", env.version)
	wasm, err := buildWasm(ctx, goTool, root)
	if err != nil {
		return nil, err
	}
	wasmExec, err := os.ReadFile(filepath.Join(env.goroot, "lib", "wasm", WasmExecFile))
	if err != nil {
		return nil, fmt.Errorf("site: %s has no %s to load the WebAssembly with: %w", env.version, WasmExecFile, pathCause(err))
	}
	wasmJS, err := WasmScript(wasm, env.version)
	if err != nil {
		return nil, err
	}
	return newSite(page, simulator{wasmExec: wasmExec, wasmJS: wasmJS, goVersion: env.version}, "built from "+root+" at "+env.version), nil
}

// simulator is the site's two simulator files and the Go that built
// them.
type simulator struct {
	wasmExec, wasmJS []byte
	goVersion        string
}

// PageDigestFile is the file go generate writes beside the simulator in
// gen/: pageDigest of the page files it was built with, which a
// -tags playground binary compares with its own.
const PageDigestFile = "page.sha256"

// readPage reads the three page files from fsys (web/static's FS, or a
// tree's web/static directory).
func readPage(fsys fs.FS) (map[string][]byte, error) {
	page := make(map[string][]byte, len(pageFiles))
	for _, name := range pageFiles {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("site: the page's %s (web/static): %w", name, pathCause(err))
		}
		page[name] = b
	}
	return page, nil
}

// pageDigest is the SHA-256, in hex, of the page's files, each as its
// name, its length and its bytes (so no two sets of files share one).
func pageDigest(page map[string][]byte) string {
	h := sha256.New()
	for _, name := range pageFiles {
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(page[name]))
		h.Write(page[name])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// PageDigest is the digest of s's page files, which go generate writes
// as PageDigestFile.
func (s *Site) PageDigest() string { return pageDigest(s.files) }

// findGo returns the go command to build with: name ("go" if empty),
// found on PATH unless it is a path.
func findGo(name string) (string, error) {
	if name == "" {
		name = "go"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("site: the playground's WebAssembly is built with the Go toolchain, and there is no %s command here (%v): "+
			"install Go 1.26 or later and run again; or, with no Go here, run ratelim web --export DIR "+
			"on a machine that has Go and open DIR/index.html here (file:// needs no server); "+
			"or use a ratelim built with the playground inside "+
			"(in a clone: go generate ./web/site && go build -tags playground ./cmd/ratelim)", name, errors.Unwrap(err))
	}
	return p, nil
}

// errNoSource is the advice when Build finds no source to build from.
const errNoSource = "run ratelim web inside a clone of " + Module + " (or a directory under it), " +
	"or use a ratelim built with the playground inside (in a clone: go generate ./web/site && go build -tags playground ./cmd/ratelim), " +
	"or open the index.html of a site ratelim web --export DIR wrote elsewhere (file:// needs no server)"

// moduleRoot returns the directory of ratelim's go.mod to build in: the
// first from dir upwards, or the downloaded source of this binary's
// released version.
func moduleRoot(ctx context.Context, goTool, dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("site: cannot read the working directory to find ratelim's source from: %w", err)
		}
		dir = wd
	}
	if root, ok := findModule(dir); ok {
		return root, nil
	}
	version := releasedVersion(debug.ReadBuildInfo())
	if version == "" {
		return "", fmt.Errorf("site: no go.mod of %s in %s or a directory above it, and this ratelim is not a released version whose source Go can download: %s", Module, dir, errNoSource)
	}
	return download(ctx, goTool, version)
}

// findModule returns the first directory from dir upwards whose go.mod
// declares Module, and whether there is one.
func findModule(dir string) (string, bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePath(b) == Module {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// modulePath is the path a go.mod's module directive declares, "" if it
// has none: `module github.com/x/y`, quoted or not, a comment after it.
func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, "module")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t' && rest[0] != '"') {
			continue
		}
		rest, _, _ = strings.Cut(rest, "//")
		return strings.Trim(strings.TrimSpace(rest), "\"`")
	}
	return ""
}

// releasedVersion is the version of Module this binary was built as
// (`go install github.com/ratelim/ratelim/cmd/ratelim@v1.2.0` records
// v1.2.0), or "" for a binary built in a checkout ("(devel)"), by go
// test, or without build information.
func releasedVersion(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil || info.Main.Path != Module {
		return ""
	}
	switch v := info.Main.Version; {
	case v == "", v == "(devel)", !strings.HasPrefix(v, "v"):
		return ""
	default:
		return v
	}
}

// download fetches Module at version into Go's module cache and returns
// its directory.
func download(ctx context.Context, goTool, version string) (string, error) {
	cmd := exec.CommandContext(ctx, goTool, "mod", "download", "-json", Module+"@"+version)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// go mod download -json reports a failure in the JSON's Error, on
	// standard output, and may leave standard error empty: keep both.
	out, runErr := cmd.Output()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	dir, err := downloadedDir(version, out, stderr.Bytes(), runErr)
	if err != nil {
		return "", err
	}
	return dir, nil
}

// pseudoVersion matches the tail of a Go pseudo-version
// (v0.0.0-20261206181253-c511555e3824 and its two other forms): a
// commit's time and hash, where a release has a tag.
var pseudoVersion = regexp.MustCompile(`[-.][0-9]{14}-[0-9a-f]{12}(\+incompatible)?$`)

// downloadedDir reads go mod download -json's output for version: the
// directory it names, or an error saying why there is none and what to
// do.
func downloadedDir(version string, stdout, stderr []byte, runErr error) (string, error) {
	var got struct{ Dir, Error string }
	jsonErr := json.Unmarshal(stdout, &got)
	if runErr == nil && jsonErr == nil && got.Error == "" && got.Dir != "" {
		return got.Dir, nil
	}
	why := got.Error
	if why == "" {
		why = bounded(stderr)
	}
	if why == "" && runErr != nil {
		why = runErr.Error()
	}
	if why == "" {
		why = "it named no directory: " + bounded(stdout)
	}
	advice := errNoSource
	if pseudoVersion.MatchString(version) {
		// `go build` in a clone stamps a pseudo-version: its commit may
		// be on no server.
		advice = "this ratelim was built from an unpublished commit: run it inside that clone (or " + errNoSource + ")"
	}
	return "", fmt.Errorf("site: cannot fetch the source of ratelim %s to build the playground from: %s: %s", version, oneLine(why), advice)
}

// toolchain is what the go command reports of itself, from the module's
// root (where a go.mod's toolchain line may switch it).
type toolchain struct{ version, goroot string }

func goEnv(ctx context.Context, goTool, root string) (toolchain, error) {
	out, err := runGo(ctx, goTool, root, nil, "env", "GOVERSION", "GOROOT")
	if err != nil {
		return toolchain{}, fmt.Errorf("site: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] == "" || lines[1] == "" {
		return toolchain{}, fmt.Errorf("site: go env GOVERSION GOROOT printed %q (want a version and a directory)", out)
	}
	return toolchain{version: strings.TrimSpace(lines[0]), goroot: strings.TrimSpace(lines[1])}, nil
}

// buildWasm compiles WasmPackage for the browser in root and returns the
// .wasm file's bytes.
func buildWasm(ctx context.Context, goTool, root string) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "ratelim-web-")
	if err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "ratelim.wasm")
	if _, err := runGo(ctx, goTool, root, []string{"GOOS=js", "GOARCH=wasm"},
		"build", "-trimpath", "-buildvcs=false", "-tags", BuildTags, "-ldflags=-s -w", "-o", out, WasmPackage); err != nil {
		return nil, fmt.Errorf("site: building the playground's WebAssembly in %s: %w", root, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	return b, nil
}

// runGo runs the go command with args in dir ("" the working directory),
// with env added to this process's, and returns its standard output. Its
// error carries what go wrote to standard error.
func runGo(ctx context.Context, goTool, dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, bounded(stderr.Bytes()))
	}
	return out, nil
}

// bounded is a command's output for a message: at most its first 4 KB.
func bounded(b []byte) string {
	const max = 4 << 10
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		s = s[:max] + "\n…"
	}
	return s
}

// WasmScript is ratelim-wasm.js for the WebAssembly wasm: a comment that
// says what it is, then `window.RATELIM_WASM_GZ_B64="…";`, the bytes
// gzipped at the best compression and written in standard base64 (which
// needs no escaping in a JavaScript string). goVersion is the Go that
// built it, for the comment.
func WasmScript(wasm []byte, goVersion string) ([]byte, error) {
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	if _, err := zw.Write(wasm); err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// ratelim's simulator for the playground: web/wasm built by %s for GOOS=js GOARCH=wasm,\n", oneLine(goVersion))
	fmt.Fprintf(&b, "// %d bytes, gzipped (%d bytes) and base64'd; playground.js unpacks it.\n", len(wasm), gz.Len())
	b.WriteString(`window.RATELIM_WASM_GZ_B64="`)
	b.WriteString(base64.StdEncoding.EncodeToString(gz.Bytes()))
	b.WriteString("\";\n")
	return b.Bytes(), nil
}

// oneLine keeps a comment's text on its line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}
