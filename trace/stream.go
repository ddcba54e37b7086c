package trace

// The byte streams a Reader reads a log through: counted, cancelled
// with Options.Context, and, for a gzip, checked for an expansion no log
// has (a small gzip of newlines is gigabytes of them).

import (
	"context"
	"fmt"
	"io"
)

// cancellable is in, checking Options.Context before each read.
func (r *Reader) cancellable(in io.Reader) io.Reader {
	if r.opts.Context == nil {
		return in
	}
	return ctxReader{ctx: r.opts.Context, in: in}
}

// countReader counts the bytes read through it.
type countReader struct {
	in io.Reader
	n  int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.in.Read(p)
	c.n += int64(n)
	return n, err
}

// expansionSlack is how much a gzip may expand before its ratio is
// checked: a small log, however repetitive, is read whole.
const expansionSlack = 64 << 20

// expansionReader fails once what in has given is more than ratio times
// what raw (the gzip) has, past expansionSlack.
type expansionReader struct {
	in    io.Reader
	raw   *countReader
	n     int64
	ratio int64
}

func (e *expansionReader) Read(p []byte) (int, error) {
	n, err := e.in.Read(p)
	e.n += int64(n)
	if e.n > expansionSlack && e.n/max(e.raw.n, 1) > e.ratio {
		return n, fmt.Errorf("gzip expands more than %d times (%d MiB from %d KiB so far): not a log (want one that compresses as logs do, 5 to 20 times)", e.ratio, e.n>>20, e.raw.n>>10)
	}
	return n, err
}

// ctxReader fails each Read once ctx is done.
type ctxReader struct {
	ctx context.Context
	in  io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.in.Read(p)
}
