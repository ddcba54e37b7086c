package filekind

import (
	"io/fs"
	"testing"
)

func TestDescribe(t *testing.T) {
	for _, tt := range []struct {
		mode fs.FileMode
		want string
	}{
		{fs.ModeDir | 0o755, "a directory"},
		{fs.ModeNamedPipe, "a named pipe (FIFO)"},
		{fs.ModeSocket, "a socket"},
		{fs.ModeDevice | fs.ModeCharDevice, "a character device"},
		{fs.ModeDevice, "a block device"},
		{fs.ModeIrregular, "not a regular file (?---------)"},
	} {
		if got := Describe(tt.mode); got != tt.want {
			t.Errorf("Describe(%v) = %q, want %q", tt.mode, got, tt.want)
		}
	}
}
