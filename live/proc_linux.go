package live

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd when this process dies, however
// it dies: a redis-server the fleet started never outlives it.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
