package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ratelim/ratelim/internal/outfile/outfiletest"
	"github.com/ratelim/ratelim/internal/syncbuf"
	"github.com/ratelim/ratelim/web"
)

// needGoBuild skips a test that builds the playground's WebAssembly.
func needGoBuild(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: ratelim web builds the playground's WebAssembly (seconds warm, tens cold)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the playground with")
	}
}

// ratelim web --export writes the five files and prints the file:// URL
// that opens them on the scenario given.
func TestWebExportWritesTheSite(t *testing.T) {
	needGoBuild(t)
	dir := filepath.Join(t.TempDir(), "site")
	code, out, errOut := runArgs("web", "nat", "--set", "servers=3", "--export", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	outfiletest.WantEntries(t, dir, "index.html", "playground.css", "playground.js", "ratelim-wasm.js", "wasm_exec.js")
	if !strings.Contains(errOut, "building the playground's WebAssembly with go") {
		t.Errorf("stderr %q does not say it is building", errOut)
	}
	m := regexp.MustCompile(`(?m)^open (file://\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no file:// URL in:\n%s", out)
	}
	u, err := url.Parse(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if abs, _ := filepath.Abs(filepath.Join(dir, "index.html")); u.Path != filepath.ToSlash(abs) {
		t.Errorf("the URL opens %s, want %s", u.Path, abs)
	}
	s, err := web.Decode(u.Fragment)
	if err != nil || s.Builtin != "nat" || len(s.Settings) != 1 || s.Settings[0] != (web.Setting{Name: "servers", Value: "3"}) {
		t.Errorf("the URL's fragment is %+v, %v; want nat with servers=3", s, err)
	}
	for _, name := range []string{"index.html", "ratelim-wasm.js"} {
		if !strings.Contains(out, "wrote "+filepath.Join(dir, name)+" (") {
			t.Errorf("stdout does not say it wrote %s:\n%s", name, out)
		}
	}
}

// ratelim web serves the site on loopback, prints its URL, and stops on
// ctrl-c (the context cancelled, as SIGINT cancels main's) with exit 130.
func TestWebServesUntilInterrupted(t *testing.T) {
	needGoBuild(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"web", "window-boundary", "--no-open", "--addr", "127.0.0.1:0"}, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	}()
	urlLine := regexp.MustCompile(`the playground is at (http://127\.0\.0\.1:\d+/#\S+)`)
	var pageURL string
	for deadline := time.Now().Add(5 * time.Minute); pageURL == ""; time.Sleep(50 * time.Millisecond) {
		if m := urlLine.FindStringSubmatch(out.String()); m != nil {
			pageURL = m[1]
		}
		select {
		case code := <-done:
			t.Fatalf("ratelim web exited %d before serving: %s", code, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no URL printed in 5 minutes: stdout %q, stderr %q", out.String(), errOut.String())
		}
	}
	resp, err := http.Get(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `src="ratelim-wasm.js"`) {
		t.Errorf("GET %s: %d, %.200q; want the page", pageURL, resp.StatusCode, body)
	}
	u, _ := url.Parse(pageURL)
	if s, err := web.Decode(u.Fragment); err != nil || s.Builtin != "window-boundary" {
		t.Errorf("the URL's fragment is %+v, %v; want window-boundary", s, err)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitInterrupted || !strings.Contains(errOut.String(), "ratelim: interrupted") {
			t.Errorf("after ctrl-c: exit %d, stderr %q; want %d and interrupted", code, errOut.String(), exitInterrupted)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ratelim web did not stop 30 s after ctrl-c")
	}
	if _, err := http.Get(pageURL); err == nil {
		t.Errorf("the server still answers after ratelim web stopped")
	}
	if errOut.String() != "" && strings.Contains(errOut.String(), "could not open a browser") {
		t.Errorf("--no-open tried to open a browser: %s", errOut.String())
	}
}

// A port in use is refused before the WebAssembly is built: with no go
// command on PATH (so a build would fail at once, saying so), the
// refusal names --addr, not the missing toolchain, and says the cause
// once.
func TestWebRefusesABusyPortBeforeBuilding(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	t.Setenv("PATH", t.TempDir())
	addr := held.Addr().String()
	code, _, errOut := runArgs("web", "--no-open", "--addr", addr)
	if code != exitBadInput || !strings.Contains(errOut, "--addr "+addr+": ") || strings.Contains(errOut, "go command") {
		t.Errorf("exit %d, stderr %q; want %d naming --addr %s, before any build", code, errOut, exitBadInput, addr)
	}
	if strings.Count(errOut, addr) != 1 {
		t.Errorf("stderr names %s %d times, want once: %q", addr, strings.Count(errOut, addr), errOut)
	}
}

// Each desktop's opener, with the URL last.
func TestOpenerPerDesktop(t *testing.T) {
	for _, tc := range []struct{ goos, want string }{
		{"linux", "xdg-open"},
		{"freebsd", "xdg-open"},
		{"darwin", "open"},
		{"windows", "rundll32 url.dll,FileProtocolHandler"},
	} {
		name, args := opener(tc.goos)
		if got := strings.Join(append([]string{name}, args...), " "); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.goos, got, tc.want)
		}
	}
}
