// Package devserver is what the development programs that run a real
// server (scripts/load, scripts/memory) share: a work folder and the
// server's binary.
package devserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Prepare makes a temporary work folder named after the program and
// returns it with the binary to run: bin when given, otherwise
// ./cmd/pulsewire built into the folder. The caller removes the folder.
func Prepare(program, bin string) (dir, binary string, err error) {
	if dir, err = os.MkdirTemp("", "pulsewire-"+program); err != nil {
		return "", "", err
	}
	if bin != "" {
		return dir, bin, nil
	}
	binary = filepath.Join(dir, "pulsewire")
	fmt.Fprintln(os.Stderr, "building pulsewire...")
	if out, err := exec.Command("go", "build", "-o", binary, "./cmd/pulsewire").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return dir, binary, nil
}
