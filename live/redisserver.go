package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RedisServer is a redis-server process this program started on a loopback
// port, with nothing saved to disk: what `ratelim serve --store redis-server`
// runs its limiter on, and what an outage fault stops and starts again, so
// that the servers in front of it meet a store that is really gone.
type RedisServer struct {
	Port int
	dir  string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// StartRedisServer starts redis-server (found on PATH) on a free loopback
// port and waits until it answers.
func StartRedisServer(ctx context.Context) (*RedisServer, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, errors.New("live: redis-server is not installed (on Debian: apt-get install redis-server)")
	}
	dir, err := os.MkdirTemp("", "ratelim-redis-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r := &RedisServer{Port: port, dir: dir}
	if err := r.Start(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return r, nil
}

// URL is the server's redis:// URL.
func (r *RedisServer) URL() string { return "redis://127.0.0.1:" + strconv.Itoa(r.Port) }

// Start starts the server (again) on its port and waits until it answers.
func (r *RedisServer) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		return nil
	}
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir, "--logfile", filepath.Join(r.dir, "redis.log"))
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("live: starting redis-server: %w", err)
	}
	r.cmd = cmd
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			// A start given up on leaves no server behind.
			r.killLocked()
			return fmt.Errorf("live: redis-server on port %d: start given up: %w", r.Port, err)
		}
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(r.Port), 100*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
	r.killLocked()
	return fmt.Errorf("live: redis-server on port %d did not answer within 5 s; its log ends: %s", r.Port, lastLine(log))
}

// killLocked kills the server and waits for it, so that no process is
// left behind, not even a zombie; r.mu is held. A server that had already
// died (crashed, or killed from outside) is not an error: it is stopped.
func (r *RedisServer) killLocked() error {
	if r.cmd == nil {
		return nil
	}
	err := r.cmd.Process.Kill()
	r.cmd.Wait()
	r.cmd = nil
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// lastLine is the last non-empty line of a log, for an error message.
func lastLine(log []byte) string {
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if line := strings.TrimSpace(lines[len(lines)-1]); line != "" {
		return line
	}
	return "(nothing)"
}

// Stop kills the server, as a crash would: clients see connections refused
// until Start.
func (r *RedisServer) Stop() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.killLocked()
}

// Close stops the server and removes its directory.
func (r *RedisServer) Close() error {
	err := r.Stop()
	os.RemoveAll(r.dir)
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
