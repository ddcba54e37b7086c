// Package filekind names, for a message a person reads, what a path is
// when it is not the regular file a command wanted: a scenario's trace
// file that is a FIFO, an output path that is a device.
package filekind

import "io/fs"

// Describe names what a file of mode m is when it is not a regular file:
// "a directory", "a named pipe (FIFO)", "a socket", "a character device",
// "a block device", or "not a regular file (MODE)" for anything else.
func Describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file (" + m.Type().String() + ")"
}
