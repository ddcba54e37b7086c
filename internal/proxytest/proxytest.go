// Package proxytest starts the real proxies teams put in front of their
// APIs, nginx and HAProxy, on loopback for the length of one test, so that
// the peer models of their limiters (nginx's limit_req, HAProxy's
// http_req_rate) and `ratelim probe` meet the servers themselves rather
// than tables derived from their source.
//
// Each server runs unprivileged in a directory of its own under
// t.TempDir, in the foreground, on a loopback port picked free, with a
// configuration the test gives only the limiter part of: [StartNginx]
// writes the zones and one location per path (each serving a static file:
// a location that only says `return` is never limited, because return
// runs in the rewrite phase, before limit_req's preaccess phase), and
// [StartHAProxy] the frontend's lines after its bind. Both are stopped
// with t.Cleanup (SIGTERM, then SIGKILL to the process group past a
// deadline), so no proxy outlives its test. A test that needs one calls
// [NeedNginx] or [NeedHAProxy] first: without the binary it is skipped,
// saying so (.ci/run installs both).
//
// nginx's access log is written in a format of this package's
// ([Nginx.AccessLog]): the instant nginx began the request on its own
// clock, the limiter's verdict ($limit_req_status) and the request's
// X-Ratelim-Request header, which `ratelim load` sends, so that each
// observation of a load run is joined with nginx's view of it.
//
// Only tests import this package.
package proxytest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startWithin bounds how long a started proxy may take to answer HTTP:
// generous for a loaded 2-core machine, where it takes milliseconds.
const startWithin = 10 * time.Second

// stopWithin is how long a proxy may take to exit after SIGTERM before
// its process group is killed.
const stopWithin = 5 * time.Second

// portTries is how often a start is tried on a fresh port when the port
// picked was taken between picking it and the proxy binding it.
const portTries = 5

// need returns bin's path, or skips t when it is neither on PATH nor in
// /usr/sbin, where Debian installs both proxies (a user's PATH may lack it).
func need(t testing.TB, bin string) string {
	t.Helper()
	if path, err := exec.LookPath(bin); err == nil {
		return path
	}
	if path, err := exec.LookPath(filepath.Join("/usr/sbin", bin)); err == nil {
		return path
	}
	t.Skipf("%s is neither on PATH nor in /usr/sbin: skipping a test against the real %s (.ci/run installs it: apt-get install %s)", bin, bin, bin)
	return ""
}

// freePort is a loopback port free now. The proxy binds it later, so
// another process may take it first; start tries again on a fresh one.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// process is a proxy running in the foreground, in a process group of
// its own so that its workers are stopped with it.
type process struct {
	name string
	cmd  *exec.Cmd
	out  *lockedBuffer // its standard output and error
	done chan struct{} // closed when it has exited
}

// readyHeader carries the token a started proxy's readiness path answers
// with.
const readyHeader = "X-Proxytest-Ready"

// readyToken is a token for one start.
func readyToken() string { return strconv.FormatInt(time.Now().UnixNano(), 36) }

// errAddrInUse is a start that failed because its port was taken.
var errAddrInUse = errors.New("address in use")

// start runs the command and waits until url answers with token in its
// readyHeader: the proxy started, not some other server on the port.
// It fails with errAddrInUse when the proxy exits saying its port was
// taken, so that the caller tries another.
func start(t testing.TB, name string, cmd *exec.Cmd, url, token string) (*process, error) {
	t.Helper()
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	client := &http.Client{Timeout: 200 * time.Millisecond}
	deadline := time.Now().Add(startWithin)
	for {
		select {
		case <-p.done:
			text := p.output()
			if strings.Contains(text, "in use") {
				return nil, errAddrInUse
			}
			return nil, fmt.Errorf("%s exited at start: %s", name, text)
		default:
		}
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			// Another server that took the port first answers too, but
			// not with the token.
			if resp.Header.Get(readyHeader) == token {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s did not answer %s within %v; it said: %s", name, url, startWithin, p.output())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// output is what the process has written so far.
func (p *process) output() string { return strings.TrimSpace(p.out.String()) }

// lockedBuffer is a process's output, written by exec's copying
// goroutine while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// stop ends the proxy: SIGTERM to its group (nginx's fast shutdown,
// HAProxy's hard stop), then SIGKILL past stopWithin.
func (p *process) stop() {
	pgid := -p.cmd.Process.Pid
	syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopWithin):
		syscall.Kill(pgid, syscall.SIGKILL)
		<-p.done
	}
	// Workers left by a master that exited first.
	syscall.Kill(pgid, syscall.SIGKILL)
}

// writeFile writes a file of the test's, failing it on error.
func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
