package site

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/ratelim/ratelim/internal/outfile"
	"github.com/ratelim/ratelim/internal/outfile/outfiletest"
)

// testSite is a site of the real page and two small simulator files,
// made without building anything.
func testSite(t *testing.T) *Site {
	t.Helper()
	js, err := WasmScript([]byte("\x00asm not really"), "go1.26.8")
	if err != nil {
		t.Fatal(err)
	}
	page, err := readPage(pageFS)
	if err != nil {
		t.Fatal(err)
	}
	return newSite(page, simulator{wasmExec: []byte("// wasm_exec.js\n"), wasmJS: js}, "a test")
}

// The script carries the bytes, gzipped and base64'd, in the one
// variable the page reads, after a comment that names the Go that built
// them (which embedded.go reads back).
func TestWasmScriptCarriesTheBytes(t *testing.T) {
	wasm := bytes.Repeat([]byte("\x00asm\x01\x00\x00\x00 a WebAssembly module "), 1000)
	js, err := WasmScript(wasm, "go1.26.8\nalert(1)")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(js), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "// ") || !strings.HasPrefix(lines[1], "// ") {
		t.Fatalf("want two comment lines and the assignment, got %d lines:\n%.300s", len(lines), js)
	}
	if !strings.Contains(lines[0], "built by go1.26.8 alert(1) for GOOS=js") {
		t.Errorf("the first comment %q does not name the Go, on its line", lines[0])
	}
	m := regexp.MustCompile(`^window\.RATELIM_WASM_GZ_B64="([A-Za-z0-9+/=]+)";$`).FindStringSubmatch(lines[2])
	if m == nil {
		t.Fatalf("the assignment is not window.RATELIM_WASM_GZ_B64=\"base64\";: %.100s", lines[2])
	}
	gz, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wasm) {
		t.Errorf("unpacked %d bytes, want the %d given", len(got), len(wasm))
	}
	if len(gz) >= len(wasm)/10 {
		t.Errorf("gzipped to %d bytes of %d: not compressed at the best level", len(gz), len(wasm))
	}
}

func TestModulePath(t *testing.T) {
	for _, tc := range []struct{ gomod, want string }{
		{"module github.com/ratelim/ratelim\n\ngo 1.26.8\n", Module},
		{"// a comment\nmodule \"github.com/ratelim/ratelim\" // quoted\n", Module},
		{"module\tgithub.com/ratelim/ratelim\n", Module},
		{"module github.com/someone/fork\n", "github.com/someone/fork"},
		{"modules github.com/ratelim/ratelim\n", ""},
		{"go 1.26.8\n", ""},
		{"", ""},
	} {
		if got := modulePath([]byte(tc.gomod)); got != tc.want {
			t.Errorf("modulePath(%q) = %q, want %q", tc.gomod, got, tc.want)
		}
	}
}

// findModule walks up to ratelim's go.mod, past another module's.
func TestFindModuleWalksUpToRatelim(t *testing.T) {
	root := t.TempDir()
	write := func(dir, gomod string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if gomod != "" {
			if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(root, "module "+Module+"\n")
	other := filepath.Join(root, "internal", "gubernatorcheck")
	write(other, "module "+Module+"/internal/gubernatorcheck\n")
	deep := filepath.Join(other, "a", "b")
	write(deep, "")
	for _, dir := range []string{root, filepath.Join(root, "internal"), other, deep} {
		if got, ok := findModule(dir); !ok || got != root {
			t.Errorf("findModule(%s) = %q, %v; want %s", dir, got, ok, root)
		}
	}
	lone := t.TempDir()
	write(lone, "module example.com/other\n")
	if got, ok := findModule(lone); ok {
		t.Errorf("findModule(%s) = %q outside ratelim", lone, got)
	}
	// And the checkout this test runs in is found from here.
	if got, ok := findModule("."); !ok || !fileExists(filepath.Join(got, "web", "site", "site.go")) {
		t.Errorf("findModule(.) = %q, %v; want this checkout's root", got, ok)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestReleasedVersion(t *testing.T) {
	info := func(path, version string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: path, Version: version}}
	}
	for _, tc := range []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{info(Module, "v1.2.0"), true, "v1.2.0"},
		{info(Module, "v0.0.0-20261206165520-c1ad031aaaaa"), true, "v0.0.0-20261206165520-c1ad031aaaaa"},
		{info(Module, "(devel)"), true, ""},
		{info(Module, ""), true, ""},
		{info("example.com/fork", "v1.2.0"), true, ""},
		{nil, false, ""},
	} {
		if got := releasedVersion(tc.info, tc.ok); got != tc.want {
			t.Errorf("releasedVersion(%+v) = %q, want %q", tc.info, got, tc.want)
		}
	}
}

// Without a go command, Build says so and what to do instead.
func TestBuildWithoutGoSaysWhatToDo(t *testing.T) {
	_, err := Build(context.Background(), Options{Go: "no-such-go-command", Rebuild: true})
	if err == nil {
		t.Fatal("Build with no go command succeeded")
	}
	for _, want := range []string{"no no-such-go-command command", "install Go", "-tags playground", "on a machine that has Go and open DIR/index.html here"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// Outside a checkout, a binary that is not a release (this test's) has
// no source to build from: the error says where to run it.
func TestBuildOutsideACheckoutSaysWhereToRun(t *testing.T) {
	if _, err := findGo(""); err != nil {
		t.Skip(err)
	}
	_, err := Build(context.Background(), Options{Dir: t.TempDir(), Rebuild: true})
	if err == nil {
		t.Fatal("Build outside a checkout succeeded")
	}
	for _, want := range []string{"no go.mod of " + Module, "inside a clone", "-tags playground"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// Export writes every file, creating the directory, all or nothing, and
// again over its own output; through a link to a file it writes the
// file and keeps the link.
func TestExportWritesTheSite(t *testing.T) {
	s := testSite(t)
	dir := filepath.Join(t.TempDir(), "new", "site")
	paths, err := s.Export(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(Files) {
		t.Fatalf("Export wrote %q, want the %d files", paths, len(Files))
	}
	for i, name := range Files {
		if paths[i] != filepath.Join(dir, name) {
			t.Errorf("path %d is %s, want %s", i, paths[i], filepath.Join(dir, name))
		}
		got, err := os.ReadFile(paths[i])
		want, _ := s.File(name)
		if err != nil || !bytes.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s: %d bytes, %v; want its %d", name, len(got), err, len(want))
		}
	}
	outfiletest.WantEntries(t, dir, "index.html", "playground.css", "playground.js", "ratelim-wasm.js", "wasm_exec.js")

	// Again, over a link to a file elsewhere: the link stays.
	elsewhere := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(elsewhere, []byte("old "+Generator), 0o644); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, IndexFile)
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, index); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Export(dir); err != nil {
		t.Fatal(err)
	}
	outfiletest.WantLink(t, index, elsewhere)
	if got, _ := os.ReadFile(elsewhere); !bytes.Equal(got, s.files[IndexFile]) {
		t.Errorf("the link's target holds %q, want the page", got)
	}
	outfiletest.WantEntries(t, dir, "index.html", "playground.css", "playground.js", "ratelim-wasm.js", "wasm_exec.js")
}

// A write that fails part way (a full disk while writing the 7.6 MB
// simulator) leaves the earlier export whole, not a new page beside an
// old simulator, and no temporary file behind.
func TestExportIsAllOrNothing(t *testing.T) {
	old := testSite(t)
	dir := t.TempDir()
	if _, err := old.Export(dir); err != nil {
		t.Fatal(err)
	}
	next := testSite(t)
	next.files[ScriptFile] = []byte("// a newer page\n")
	next.files[WasmFile] = []byte("// a newer simulator\n")
	full := errors.New("no space left on device")
	createTemp = func(dir, pattern string) (*os.File, error) {
		if strings.Contains(pattern, WasmFile) {
			return nil, full
		}
		return os.CreateTemp(dir, pattern)
	}
	defer func() { createTemp = os.CreateTemp }()
	paths, err := next.Export(dir)
	if !errors.Is(err, full) || len(paths) != 0 {
		t.Fatalf("Export = %q, %v; want nothing written and the disk's error", paths, err)
	}
	for _, name := range Files {
		got, _ := os.ReadFile(filepath.Join(dir, name))
		if want, _ := old.File(name); !bytes.Equal(got, want) {
			t.Errorf("%s holds %q, want the earlier export's %q", name, got, want)
		}
	}
	outfiletest.WantEntries(t, dir, "index.html", "playground.css", "playground.js", "ratelim-wasm.js", "wasm_exec.js")
}

// The page's index.html carries the tag that marks an export as ours.
func TestThePageCarriesTheGenerator(t *testing.T) {
	if b, _ := testSite(t).File(IndexFile); !bytes.Contains(b, []byte(Generator)) {
		t.Errorf("index.html has no %s: Export would refuse to replace its own", Generator)
	}
}

// Export refuses, writing nothing, a directory that is a file or a FIFO,
// and a directory where one of the site's files is a FIFO, a directory or
// a dangling link: each an *outfile.UnusableError.
func TestExportRefusesWhatIsNotItsToReplace(t *testing.T) {
	s := testSite(t)
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(tmp, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	withFIFO := filepath.Join(tmp, "with-fifo")
	withDir := filepath.Join(tmp, "with-dir")
	withDangling := filepath.Join(tmp, "with-dangling")
	// Someone's own site: a page, and a stylesheet beside a page of ours
	// that is not (no generator tag).
	theirs := filepath.Join(tmp, "theirs")
	theirCSS := filepath.Join(tmp, "their-css")
	for _, d := range []string{theirs, theirCSS} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(theirs, IndexFile), []byte("<h1>my course homepage</h1>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(theirCSS, CSSFile), []byte("h1 {}"), 0o644); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(tmp, "dangling")
	if err := os.Symlink(filepath.Join(tmp, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{withFIFO, withDir, withDangling} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(withFIFO, WasmFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(withDir, ScriptFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(tmp, "missing"), filepath.Join(withDangling, IndexFile)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		want string
		left []string // what dir holds after
	}{
		{file, "it is a regular file, not a directory", nil},
		{fifo, "it is a named pipe (FIFO), not a directory", nil},
		{withFIFO, "ratelim-wasm.js: it is a named pipe (FIFO)", []string{WasmFile}},
		{withDir, "playground.js: it is a directory", []string{ScriptFile}},
		{withDangling, "index.html: it is a symbolic link to", []string{IndexFile}},
		{"", "no directory named", nil},
		{theirs, "index.html: it is not a ratelim playground's", []string{IndexFile}},
		{theirCSS, "playground.css: it is not a ratelim playground's", []string{CSSFile}},
		{dangling, "it is a symbolic link to " + filepath.Join(tmp, "nowhere") + ", which does not exist", nil},
	} {
		paths, err := s.Export(tc.dir)
		var unusable *outfile.UnusableError
		if !errors.As(err, &unusable) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Export(%q) = %v; want an *outfile.UnusableError saying %q", tc.dir, err, tc.want)
		}
		if len(paths) != 0 {
			t.Errorf("Export(%q) wrote %q before refusing", tc.dir, paths)
		}
		if tc.left != nil {
			outfiletest.WantEntries(t, tc.dir, tc.left...)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Errorf("the file Export was pointed at was changed: %q", b)
	}
}

// The handler serves the five files and nothing else, each with its
// type and the security headers; a directory is never listed.
func TestHandlerServesTheSiteAlone(t *testing.T) {
	s := testSite(t)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, tc := range []struct {
		method, path string
		status       int
		ctype        string
		body         []byte
		host         string // "" the server's own 127.0.0.1:PORT
	}{
		{"GET", "/", 200, "text/html; charset=utf-8", s.files[IndexFile], ""},
		{"GET", "/index.html", 200, "text/html; charset=utf-8", s.files[IndexFile], ""},
		{"GET", "/playground.css", 200, "text/css; charset=utf-8", s.files[CSSFile], ""},
		{"GET", "/playground.js", 200, "text/javascript; charset=utf-8", s.files[ScriptFile], ""},
		{"GET", "/wasm_exec.js", 200, "text/javascript; charset=utf-8", s.files[WasmExecFile], ""},
		{"GET", "/ratelim-wasm.js", 200, "text/javascript; charset=utf-8", s.files[WasmFile], ""},
		{"GET", "/index.html?x=1", 200, "text/html; charset=utf-8", s.files[IndexFile], ""},
		{"HEAD", "/playground.js", 200, "text/javascript; charset=utf-8", nil, ""},
		{"GET", "/static.go", 404, "", nil, ""},
		{"GET", "/gen/", 404, "", nil, ""},
		{"GET", "/web/static/index.html", 404, "", nil, ""},
		{"GET", "/favicon.ico", 404, "", nil, ""},
		{"GET", "/..%2fgo.mod", 404, "", nil, ""},
		{"GET", "/%2e%2e/go.mod", 404, "", nil, ""},
		{"POST", "/", 405, "", nil, ""},
		{"PUT", "/index.html", 405, "", nil, ""},
		// DNS rebinding: another site's name resolved to loopback.
		{"GET", "/", 421, "", nil, "evil.example:" + port},
		{"GET", "/ratelim-wasm.js", 421, "", nil, "evil.example"},
		{"GET", "/", 421, "", nil, "127.0.0.1.evil.example:" + port},
		{"GET", "/", 421, "", nil, "192.168.1.10:" + port},
		{"GET", "/", 200, "text/html; charset=utf-8", s.files[IndexFile], "localhost:" + port},
		{"GET", "/", 200, "text/html; charset=utf-8", s.files[IndexFile], "LOCALHOST"},
		{"GET", "/", 200, "text/html; charset=utf-8", s.files[IndexFile], "[::1]:" + port},
		{"GET", "/", 200, "text/html; charset=utf-8", s.files[IndexFile], "127.0.0.1"},
	} {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		name := tc.method + " " + tc.path + " Host " + req.Host
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", name, resp.StatusCode, tc.status)
		}
		if tc.ctype != "" && resp.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("%s: Content-Type %q, want %q", name, resp.Header.Get("Content-Type"), tc.ctype)
		}
		if tc.status == 200 && !bytes.Equal(body, tc.body) {
			t.Errorf("%s: %d bytes of body, want %d", name, len(body), len(tc.body))
		}
		if tc.status != 200 && bytes.Contains(body, []byte("<a href")) {
			t.Errorf("%s: a listing: %q", name, body)
		}
		for h, want := range map[string]string{
			"Content-Security-Policy": s.Policy(),
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "no-referrer",
			"X-Frame-Options":         "DENY",
		} {
			if got := resp.Header.Get(h); got != want {
				t.Errorf("%s: %s %q, want %q", name, h, got, want)
			}
		}
	}
}

// The header's policy is the page's meta tag's: one policy, whatever the
// page says; a page without one runs nothing.
func TestPolicyIsThePages(t *testing.T) {
	s := testSite(t)
	for _, tc := range []struct{ index, want string }{
		{`<head><meta http-equiv="Content-Security-Policy" content="default-src 'self'; img-src data:"></head>`, "default-src 'self'; img-src data:; frame-ancestors 'none'"},
		{`<META HTTP-EQUIV="Content-Security-Policy" CONTENT="script-src &#39;self&#39;;">`, "script-src 'self'; frame-ancestors 'none'"},
		{`<head><title>no policy</title></head>`, "default-src 'none'; frame-ancestors 'none'"},
	} {
		s.files[IndexFile] = []byte(tc.index)
		if got := s.Policy(); got != tc.want {
			t.Errorf("%s: Policy() = %q, want %q", tc.index, got, tc.want)
		}
	}
}

// The policy names no origin but the page's own: every source is a
// keyword or a scheme the page makes itself (data:, blob:).
func TestPolicyAllowsNoOtherOrigin(t *testing.T) {
	policy := testSite(t).Policy()
	for _, want := range []string{"default-src ", "script-src 'self' 'wasm-unsafe-eval'", "connect-src 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(policy, want) {
			t.Errorf("the policy %q has no %s: is index.html's <meta http-equiv=\"Content-Security-Policy\"> there?", policy, want)
		}
	}
	for _, directive := range strings.Split(policy, ";") {
		fields := strings.Fields(directive)
		if len(fields) == 0 {
			continue
		}
		for _, src := range fields[1:] {
			switch src {
			case "'self'", "'none'", "'wasm-unsafe-eval'", "'unsafe-inline'", "data:", "blob:":
			default:
				t.Errorf("%s allows %s", fields[0], src)
			}
		}
		if fields[0] == "script-src" && strings.Contains(directive, "'unsafe-inline'") {
			t.Errorf("scripts may run inline: %s", directive)
		}
	}
}

// go mod download -json's failure is in its JSON's Error, on standard
// output, with standard error often empty: the message carries it, and
// for a pseudo-version (a build in a clone) says to run in that clone.
func TestDownloadedDirSaysWhy(t *testing.T) {
	exit1 := errors.New("exit status 1")
	for _, tc := range []struct {
		name, version  string
		stdout, stderr string
		runErr         error
		wantDir        string
		want           []string
	}{
		{"found", "v1.2.0", `{"Path": "x", "Dir": "/cache/x@v1.2.0"}`, "", nil, "/cache/x@v1.2.0", nil},
		{"release missing", "v1.2.0", `{"Path": "x", "Error": "reading x: 404 Not Found"}`, "", exit1, "",
			[]string{"v1.2.0", "404 Not Found", "inside a clone"}},
		{"unpublished commit", "v0.0.0-20261206181253-c511555e3824",
			`{"Path": "x", "Error": "x@v0.0.0-20261206181253-c511555e3824: 403 Forbidden"}`, "", exit1, "",
			[]string{"403 Forbidden", "built from an unpublished commit: run it inside that clone"}},
		{"pre-release pseudo", "v1.2.1-0.20261206181253-c511555e3824", `{"Error": "gone"}`, "", exit1, "",
			[]string{"gone", "unpublished commit"}},
		{"stderr only", "v1.2.0", "", "go: no network", exit1, "", []string{"go: no network"}},
		{"exit alone", "v1.2.0", "", "", exit1, "", []string{"exit status 1"}},
		{"no dir", "v1.2.0", `{"Path": "x"}`, "", nil, "", []string{"named no directory"}},
	} {
		dir, err := downloadedDir(tc.version, []byte(tc.stdout), []byte(tc.stderr), tc.runErr)
		if dir != tc.wantDir {
			t.Errorf("%s: dir %q, want %q", tc.name, dir, tc.wantDir)
		}
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want it to say %q", tc.name, err, w)
			}
		}
		if tc.want == nil && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if tc.name == "release missing" && strings.Contains(err.Error(), "unpublished") {
			t.Errorf("%s: a release called an unpublished commit: %v", tc.name, err)
		}
	}
}

// A -tags playground binary's gen/ is used only when go generate wrote
// all of it beside the page files the binary carries; else the error
// says what to run.
func TestFromGeneratedRefusesAStaleOrMissingSimulator(t *testing.T) {
	page := fstest.MapFS{}
	for _, name := range pageFiles {
		page[name] = &fstest.MapFile{Data: []byte("the page's " + name)}
	}
	files, err := readPage(page)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := WasmScript([]byte("\x00asm"), "go1.26.8")
	gen := func(digest string, skip string) fstest.MapFS {
		m := fstest.MapFS{"gen/README.md": {Data: []byte("run go generate")}}
		for name, b := range map[string][]byte{WasmFile: js, WasmExecFile: []byte("// wasm_exec"), PageDigestFile: []byte(digest + "\n")} {
			if name != skip {
				m["gen/"+name] = &fstest.MapFile{Data: b}
			}
		}
		return m
	}
	edited := fstest.MapFS{}
	for k, v := range page {
		edited[k] = v
	}
	edited[ScriptFile] = &fstest.MapFile{Data: []byte("a newer playground.js")}
	for _, tc := range []struct {
		name string
		gen  fstest.MapFS
		page fstest.MapFS
		want string // "" ok
	}{
		{"generated", gen(pageDigest(files), ""), page, ""},
		{"README alone (no go generate)", fstest.MapFS{"gen/README.md": {}}, page, "without go generate ./web/site"},
		{"no digest", gen(pageDigest(files), PageDigestFile), page, "without go generate ./web/site"},
		{"no wasm", gen(pageDigest(files), WasmFile), page, "without go generate ./web/site"},
		{"page edited since", gen(pageDigest(files), ""), edited, "generated beside other page files"},
	} {
		sim, ok, err := fromGenerated(tc.gen, tc.page)
		switch {
		case tc.want == "" && (err != nil || !ok || sim.goVersion != "go1.26.8" || !bytes.Equal(sim.wasmJS, js)):
			t.Errorf("%s: %v, %v, %+v; want the simulator, built by go1.26.8", tc.name, ok, err, sim.goVersion)
		case tc.want != "" && (ok || err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "go generate ./web/site && go build -tags playground")):
			t.Errorf("%s: %v, %v; want a refusal saying %q and what to run", tc.name, ok, err, tc.want)
		}
	}
}

// Built from source, the page comes from the same tree as the simulator
// (its web/static), not from this binary: here a tree whose index.html
// differs from the one compiled in, made of links to this checkout's
// files.
func TestBuildTakesThePageFromTheTree(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the playground's WebAssembly (seconds warm, tens cold)")
	}
	if _, err := findGo(""); err != nil {
		t.Skip(err)
	}
	real, ok := findModule(".")
	if !ok {
		t.Fatal("no ratelim module above the test's directory")
	}
	tree := t.TempDir()
	linkAllBut := func(from, to, keep string) {
		t.Helper()
		entries, err := os.ReadDir(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != keep {
				if err := os.Symlink(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	linkAllBut(real, tree, "web")
	if err := os.MkdirAll(filepath.Join(tree, "web", "static"), 0o755); err != nil {
		t.Fatal(err)
	}
	linkAllBut(filepath.Join(real, "web"), filepath.Join(tree, "web"), "static")
	page, err := readPage(pageFS)
	if err != nil {
		t.Fatal(err)
	}
	page[IndexFile] = append([]byte("<!-- the tree's own page -->\n"), page[IndexFile]...)
	for name, b := range page {
		if err := os.WriteFile(filepath.Join(tree, "web", "static", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Build(context.Background(), Options{Dir: tree, Rebuild: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.File(IndexFile); !bytes.Equal(got, page[IndexFile]) {
		t.Errorf("the site's index.html is not the tree's (%d bytes, want %d): %.60q", len(got), len(page[IndexFile]), got)
	}
	if !strings.HasPrefix(s.Origin, "built from "+tree+" at go") {
		t.Errorf("Origin %q, want built from %s at go…", s.Origin, tree)
	}
}
