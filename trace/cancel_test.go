package trace_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratelim/ratelim/trace"
)

// endless serves fill forever, and cancels after serving cancelAfter
// bytes: the reading must then stop, though no request was ever made.
type endless struct {
	fill        byte
	served      int
	cancelAfter int
	cancel      context.CancelFunc
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.fill
	}
	if e.served += len(p); e.served >= e.cancelAfter {
		e.cancel()
	}
	return len(p), nil
}

// gzipOf is a gzip stream of n bytes of fill.
func gzipOf(t *testing.T, fill byte, n int) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	chunk := bytes.Repeat([]byte{fill}, 1<<20)
	for ; n > 0; n -= len(chunk) {
		zw.Write(chunk[:min(n, len(chunk))])
	}
	zw.Close()
	return buf.Bytes()
}

// TestContextStopsARequestlessLog reads logs that never make a request —
// blank lines, bad lines skipped, one line without end (/dev/zero), a
// gzip of newlines — and cancels the context part way: Next must return
// the context's error, not read on (before Options.Context, each of these
// read until the input ended, which an endless one never does).
func TestContextStopsARequestlessLog(t *testing.T) {
	cases := []struct {
		name    string
		fill    byte
		skipBad bool
		gzipped bool
	}{
		{"blank lines", '\n', false, false},
		{"bad lines skipped", 'x', true, false}, // MaxLine makes "xxx…" lines
		{"no newline", 0, false, false},
		{"gzip of newlines", '\n', false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var in io.Reader = &endless{fill: c.fill, cancelAfter: 1 << 20, cancel: cancel}
			if c.fill == 'x' {
				// Lines of 100 x's.
				in = &lines{line: append(bytes.Repeat([]byte("x"), 100), '\n'), cancelAfter: 1 << 20, cancel: cancel}
			}
			if c.gzipped {
				// 8 MiB of newlines, 8 KiB of gzip, cancelled at its
				// first read: unchecked, it was read to its end.
				z := gzipOf(t, '\n', 8<<20)
				in = &cancelAt{r: bytes.NewReader(z), cancel: cancel}
			}
			done := make(chan error, 1)
			go func() {
				r, err := trace.NewReader(in, "endless", trace.Options{Format: trace.Combined, SkipBad: c.skipBad, Context: ctx})
				if err != nil {
					done <- err
					return
				}
				_, err = r.Next()
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Next = %v, want context.Canceled", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Next still reading 30s after the context was cancelled")
			}
		})
	}
}

// lines serves line forever, cancelling after cancelAfter bytes.
type lines struct {
	line        []byte
	off         int
	served      int
	cancelAfter int
	cancel      context.CancelFunc
}

func (l *lines) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], l.line[l.off:])
		n += c
		l.off = (l.off + c) % len(l.line)
	}
	if l.served += n; l.served >= l.cancelAfter {
		l.cancel()
	}
	return n, nil
}

// cancelAt cancels once the first bytes of r are read: a gzip's
// expansion must be checked as it is read, not only its file.
type cancelAt struct {
	r      io.Reader
	cancel context.CancelFunc
}

func (c *cancelAt) Read(p []byte) (int, error) {
	n, err := c.r.Read(p[:min(len(p), 4096)])
	c.cancel()
	return n, err
}

// TestGuessFormatLeavesAPipeAlone guesses the format of a named pipe:
// the guess must not read it, for what it reads is gone for the reader
// (which then started mid-log, or, the writer done, waited for ever).
func TestGuessFormatLeavesAPipeAlone(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "access.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	const line = `192.0.2.1 - - [01/Mar/2026:12:00:00 +0000] "GET /a HTTP/1.1" 200 1 "-" "-"` + "\n"
	go func() { // one writer, once, as a shell's mkfifo and cat would
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.WriteString(line + line)
			w.Close()
		}
	}()
	done := make(chan error, 1)
	var first trace.Record
	go func() {
		r, err := trace.Open(fifo, trace.Options{Format: trace.GuessFormat(fifo)})
		if err != nil {
			done <- err
			return
		}
		defer r.Close()
		first, err = r.Next()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil || first.Line != 1 {
			t.Fatalf("the pipe's first request: %+v, %v (want line 1)", first, err)
		}
	case <-time.After(20 * time.Second):
		// Unblock the reader's open, for the test to end.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("no request read from the pipe in 20s: GuessFormat read what the reader needed")
	}
}

// TestGzipBombRefused reads a gzip of 96 MiB of zeros (96 KiB of it):
// refused once it has expanded past the bound, not read to its end (4 GiB
// of newlines took 87s to say the log had no request). Zeros, one line
// without end, read fastest: what is bounded is the bytes.
func TestGzipBombRefused(t *testing.T) {
	z := gzipOf(t, 0, 96<<20)
	r, err := trace.NewReader(bytes.NewReader(z), "bomb.log.gz", trace.Options{Format: trace.Combined})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next()
	if err == nil || !strings.Contains(err.Error(), "bomb.log.gz: after line ") || !strings.Contains(err.Error(), ": gzip expands more than 200 times") {
		t.Fatalf("Next = %v, want the gzip refused for its expansion", err)
	}
	// Unbounded, it is read to its end: one line too long.
	r, _ = trace.NewReader(bytes.NewReader(z), "bomb.log.gz", trace.Options{Format: trace.Combined, MaxExpansion: -1})
	if _, err = r.Next(); err == nil || !strings.Contains(err.Error(), "bomb.log.gz:1: the line is longer than") {
		t.Fatalf("unbounded: Next = %v, want its one line too long", err)
	}
}
