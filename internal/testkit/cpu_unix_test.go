//go:build unix

package testkit

import (
	"os/exec"
	"testing"
)

// ChildrenCPU grows by the CPU a finished child spent: a shell loop that
// burns a measurable amount (tens of milliseconds on any machine; a clock
// tick is 10 ms at most) must show, and our own CPU does not count.
func TestChildrenCPU(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	before := ChildrenCPU()
	if err := exec.Command(sh, "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done").Run(); err != nil {
		t.Fatal(err)
	}
	if d := ChildrenCPU() - before; d <= 0 {
		t.Errorf("ChildrenCPU grew by %v after a busy child", d)
	}
}
