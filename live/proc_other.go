//go:build !linux

package live

import "os/exec"

// dieWithParent does nothing here: only Linux has a parent-death signal.
// Close stops the server as usual.
func dieWithParent(*exec.Cmd) {}
