// Package site assembles ratelim's browser playground as a static site
// — five files a browser opens from file://, a loopback server or any
// static host — and exports or serves it. It runs natively only: it
// builds the page's WebAssembly with the Go toolchain, writes files and
// serves HTTP, none of which the browser build has.
//
// The site's files:
//
//   - index.html, playground.css, playground.js: the page (web/static,
//     of the tree the simulator is built from, or embedded beside it).
//   - wasm_exec.js: the Go runtime's JavaScript half, copied from the
//     GOROOT of the Go that built the WebAssembly (the two must match).
//   - ratelim-wasm.js: the simulator (web/wasm built for GOOS=js
//     GOARCH=wasm), gzipped and base64'd into one classic script,
//     `window.RATELIM_WASM_GZ_B64="…";`. A page opened from file:// may not
//     fetch() a .wasm beside it (browsers treat file:// as an opaque
//     origin), but it may run a <script src>: so the page unpacks the
//     simulator from this variable (DecompressionStream('gzip')), one way
//     of loading for file://, loopback and a static host alike.
//
// Build makes the site: from the two simulator files embedded in the
// binary when it was built with `-tags playground` (after `go generate
// ./web/site`), else by building web/wasm from ratelim's source with the
// Go toolchain (see Build). [Site.Export] writes it to a directory;
// [Site.Handler] serves it.
package site

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ratelim/ratelim/internal/filekind"
	"github.com/ratelim/ratelim/internal/outfile"
	"github.com/ratelim/ratelim/web/static"
)

// The site's file names.
const (
	IndexFile    = "index.html"
	CSSFile      = "playground.css"
	ScriptFile   = "playground.js"
	WasmExecFile = "wasm_exec.js"
	WasmFile     = "ratelim-wasm.js"
)

// Files are the site's files in the order Export writes them: the page's
// first, then the simulator's.
var Files = []string{IndexFile, CSSFile, ScriptFile, WasmExecFile, WasmFile}

// pageFiles are the files that come from web/static.
var pageFiles = []string{IndexFile, CSSFile, ScriptFile}

// Site is the playground's files, in memory. Its zero value has none;
// Build makes one.
type Site struct {
	files map[string][]byte
	// Origin says where the site's files came from, for a person:
	// "embedded in this ratelim (built by go1.26.8)", "built from
	// /src/ratelim at go1.26.8".
	Origin string
}

// newSite returns the site of the page's files and the simulator's.
func newSite(page map[string][]byte, sim simulator, origin string) *Site {
	s := &Site{files: map[string][]byte{WasmExecFile: sim.wasmExec, WasmFile: sim.wasmJS}, Origin: origin}
	for _, name := range pageFiles {
		s.files[name] = page[name]
	}
	return s
}

// pageFS is the page's files this binary carries.
var pageFS fs.FS = static.FS

// File returns the named file's bytes (one of Files), and whether the site
// has it. The bytes are the site's own: the caller must not change them.
func (s *Site) File(name string) ([]byte, bool) {
	b, ok := s.files[name]
	return b, ok
}

// CheckExport refuses, writing nothing, a dir that Export would refuse
// as it is now: "" ; something other than a directory (a symbolic link
// is followed, and one whose target is missing is named as such); a
// directory, or the nearest existing one above a missing dir, that this
// process cannot write in; and any of the site's files in dir that
// outfile.Check refuses. A refusal is an *outfile.UnusableError. ratelim
// web calls it before building, so that a mistake costs no build; Export
// calls it again.
func CheckExport(dir string) error {
	if dir == "" {
		return &outfile.UnusableError{Path: dir, Err: fmt.Errorf("no directory named (want a directory to write the site into)")}
	}
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if li, lerr := os.Lstat(dir); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			dest, _ := os.Readlink(dir)
			return &outfile.UnusableError{Path: dir, Err: fmt.Errorf("it is a symbolic link to %s, which does not exist (want a directory: create the target, or remove the link)", dest)}
		}
		return checkWritable(dir, nearestExisting(dir))
	}
	if err != nil {
		return &outfile.UnusableError{Path: dir, Err: pathCause(err)}
	}
	if !fi.IsDir() {
		return &outfile.UnusableError{Path: dir, Err: fmt.Errorf("it is %s, not a directory (want a directory, new or existing)", kind(fi.Mode()))}
	}
	if err := checkWritable(dir, dir); err != nil {
		return err
	}
	for _, name := range Files {
		if err := outfile.Check(filepath.Join(dir, name), false); err != nil {
			return err
		}
	}
	return checkOurs(dir)
}

// Generator is the tag in index.html's head that marks a directory as a
// ratelim playground's: Export replaces the page's files only where
// index.html carries it (an earlier export).
const Generator = `<meta name="generator" content="ratelim playground">`

// checkOurs refuses a dir whose index.html or playground.css/.js Export
// would replace but did not write: someone's own page (a course's
// homepage, or ~ itself), whose files the user did not name. They are
// ours when index.html carries Generator.
func checkOurs(dir string) error {
	index, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err == nil && bytes.Contains(index, []byte(Generator)) {
		return nil
	}
	for _, name := range pageFiles {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return &outfile.UnusableError{Path: p, Err: fmt.Errorf("it is not a ratelim playground's (%s has no %s) and would be replaced (want an empty directory or an earlier export)", IndexFile, Generator)}
		}
	}
	return nil
}

// nearestExisting is the first directory from dir's parent upwards that
// exists: the one MkdirAll would create dir in.
func nearestExisting(dir string) string {
	d := filepath.Clean(dir)
	for {
		parent := filepath.Dir(d)
		if _, err := os.Stat(parent); err == nil || parent == d {
			return parent
		}
		d = parent
	}
}

// checkWritable refuses dir (the path the user gave) when this process
// cannot create a file in in (dir itself, or where dir would be created):
// it tries, with a file it removes at once, which asks the file system
// itself (permissions, a read-only mount, ACLs) rather than guessing from
// mode bits.
func checkWritable(dir, in string) error {
	f, err := os.CreateTemp(in, ".ratelim-check-*")
	if err != nil {
		where := ""
		if in != dir {
			where = " (it would be created in " + in + ")"
		}
		return &outfile.UnusableError{Path: dir, Err: fmt.Errorf("cannot write there%s: %w (want a directory you can write in)", where, pathCause(err))}
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// Export writes the site's files into dir, creating dir (and its parents)
// if missing, and returns the paths it wrote, in Files' order. The site
// is written all or nothing: each file goes to a temporary name beside
// the file it replaces, and only when all five are written are they
// renamed into place, so that a failed write (a full disk) never leaves
// a new page beside an old simulator. As every output of ratelim
// (internal/outfile), a symbolic link to a regular file is written
// through (the link stays a link), and a directory, device, FIFO or
// socket is never replaced. What CheckExport refuses is refused before
// anything is written: a refusal is an *outfile.UnusableError, and leaves
// dir as it was.
func (s *Site) Export(dir string) ([]string, error) {
	if err := CheckExport(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, &outfile.UnusableError{Path: dir, Err: fmt.Errorf("cannot create the directory: %w", pathCause(err))}
	}
	paths := make([]string, len(Files))
	var staged []stagedFile
	defer func() {
		for _, f := range staged {
			os.Remove(f.tmp) // after a rename, nothing is there: a no-op
		}
	}()
	for i, name := range Files {
		paths[i] = filepath.Join(dir, name)
		f, err := stage(paths[i], s.files[name])
		if err != nil {
			return nil, err
		}
		staged = append(staged, f)
	}
	for i, f := range staged {
		if err := os.Rename(f.tmp, f.target); err != nil {
			return paths[:i], fmt.Errorf("cannot write %s: %w", paths[i], outfileCause(err))
		}
	}
	return paths, nil
}

// stagedFile is a file of the site written to tmp, to be renamed onto
// target.
type stagedFile struct{ tmp, target string }

// createTemp is os.CreateTemp; a test replaces it to fail one file's
// write.
var createTemp = os.CreateTemp

// stage writes b to a temporary file beside the regular file path names
// (path itself, or the file a link at path leads to), with the
// permissions of the file it will replace (0644 for a new one).
func stage(path string, b []byte) (stagedFile, error) {
	target := path
	if li, err := os.Lstat(path); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		t, err := filepath.EvalSymlinks(path)
		if err != nil {
			return stagedFile{}, &outfile.UnusableError{Path: path, Err: pathCause(err)}
		}
		target = t
	}
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(target); err == nil {
		perm = fi.Mode().Perm()
	}
	f, err := createTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return stagedFile{}, &outfile.UnusableError{Path: path, Err: pathCause(err)}
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// CreateTemp makes the file private (0600); the site is for
		// sharing.
		err = os.Chmod(f.Name(), perm)
	}
	if err != nil {
		os.Remove(f.Name())
		return stagedFile{}, fmt.Errorf("cannot write %s: %w", path, pathCause(err))
	}
	return stagedFile{tmp: f.Name(), target: target}, nil
}

// outfileCause is a rename's error without its two paths.
func outfileCause(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// pathCause is err without the *fs.PathError's path, which the message
// already names.
func pathCause(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

// Policy is the Content-Security-Policy Handler sends with every file:
// the page's own, from index.html's <meta http-equiv> tag (which is what
// a page opened from file:// runs under), so that the page and the server
// state one policy and an edit to it is not masked by a second; plus
// frame-ancestors 'none', which a meta tag cannot carry. The page's policy
// allows its own scripts and styles, WebAssembly compiled from bytes
// ('wasm-unsafe-eval': the simulator is instantiated from the unpacked
// ratelim-wasm.js), inline style attributes (gonum's vgsvg styles every
// element of a figure inline), data: and blob: images, and nothing from
// any other origin. An index.html without the tag gets default-src
// 'none': nothing runs, rather than everything.
func (s *Site) Policy() string {
	page := "default-src 'none'"
	if m := metaPolicy.FindSubmatch(s.files[IndexFile]); m != nil {
		page = strings.TrimSuffix(strings.TrimSpace(html.UnescapeString(string(m[1]))), ";")
	}
	return page + "; frame-ancestors 'none'"
}

// metaPolicy finds the page's policy in index.html.
var metaPolicy = regexp.MustCompile(`(?i)<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)"`)

// Handler serves the site: "/" and "/index.html" the page, "/NAME" each of
// Files, with its content type, to GET and HEAD, when the request's Host
// is 127.0.0.1, [::1] or localhost (any other is 421: see loopbackHost).
// Anything else is 404 (a
// path that is no file of the site: no directory is listed, nothing but
// the site is served) or 405 (another method). Every answer carries
// Policy and headers that keep the page to itself:
// nosniff, no referrer, not framed, and no-cache, so that a page reloaded
// after ratelim was rebuilt runs the new simulator.
func (s *Site) Handler() http.Handler {
	policy := s.Policy()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", policy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-cache")
		if !loopbackHost(r.Host) {
			// DNS rebinding: a page of another site whose name now
			// resolves to 127.0.0.1 would reach this server with its own
			// name in Host. The playground is for this machine's browser,
			// which names it by a loopback address or localhost.
			http.Error(w, "421 misdirected request: the playground answers to 127.0.0.1, [::1] and localhost only", http.StatusMisdirectedRequest)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "405 method not allowed (want GET or HEAD)", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/")
		if name == "" {
			name = IndexFile
		}
		b, ok := s.files[name]
		if !ok || strings.Contains(name, "/") {
			http.Error(w, "404 not found: the playground has "+strings.Join(Files, ", "), http.StatusNotFound)
			return
		}
		h.Set("Content-Type", contentType(name))
		h.Set("Content-Length", fmt.Sprint(len(b)))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			w.Write(b)
		}
	})
}

// loopbackHost reports whether a request's Host (with or without its
// port) names this machine's loopback: 127.0.0.1, ::1 or localhost.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return host == "127.0.0.1" || host == "::1" || strings.EqualFold(host, "localhost")
}

// contentType is the type a site file is served as, by its extension:
// written here rather than read from the machine's MIME tables
// (mime.TypeByExtension reads /etc/mime.types, which may say otherwise).
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	}
	return "application/octet-stream"
}

// kind names what a path that is not a directory is.
func kind(m fs.FileMode) string {
	if m.IsRegular() {
		return "a regular file"
	}
	return filekind.Describe(m)
}
