package trace

// A log's lines: read one at a time, without their endings, a line past
// Options.MaxLine read to its end and dropped.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"
)

var utf8BOM = []byte("\xef\xbb\xbf")

// errLongLine stands for a line past MaxLine, whose rest has been read and
// dropped.
type errLongLine struct{ max int }

func (e errLongLine) Error() string {
	return fmt.Sprintf("the line is longer than %d bytes (want at most that; see Options.MaxLine)", e.max)
}

// readLine returns the next line without its line ending, valid until the
// next call; io.EOF at the end. A line longer than MaxLine is read to its
// end and dropped, and the error is errLongLine.
func (r *Reader) readLine() ([]byte, error) {
	r.long = r.long[:0]
	tooLong := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			if !tooLong && len(r.long)+len(chunk) > r.opts.MaxLine {
				tooLong, r.long = true, r.long[:0]
			}
			if !tooLong {
				r.long = append(r.long, chunk...)
			}
			continue
		case err == io.EOF && len(chunk) == 0 && len(r.long) == 0 && !tooLong:
			return nil, io.EOF
		case err != nil && err != io.EOF:
			return nil, fmt.Errorf("trace: %s: after line %d: %w", r.name, r.line, err)
		}
		r.line++
		line := chunk
		if len(r.long) > 0 {
			r.long = append(r.long, chunk...)
			line = r.long
		}
		// The line ending, "\n" or "\r\n", or none at the end of the log.
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if tooLong || len(line) > r.opts.MaxLine {
			return nil, errLongLine{r.opts.MaxLine}
		}
		if r.line == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		return line, nil
	}
}

// blank reports whether line is empty or white space only, as
// bytes.TrimSpace sees it; most lines start with a byte that shows so.
func blank(line []byte) bool {
	if len(line) > 0 && ' ' < line[0] && line[0] < utf8.RuneSelf {
		return false
	}
	return len(bytes.TrimSpace(line)) == 0
}
