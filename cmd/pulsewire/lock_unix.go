//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDataDir makes this process the only server of the SQLite databases
// under dataDir, and says so: a second `pulsewire serve` on the same folder
// is refused at start. Being alone, the server knows at start that every
// run recorded as started belongs to a process that is gone (a crash), and
// repairs it at once rather than after the run limit. The lock is the
// kernel's (flock), so a crash releases it; unlock releases it at a stop.
func lockDataDir(dataDir string) (unlock func(), err error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	path := filepath.Join(dataDir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the data folder: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another pulsewire serve is using %s (it holds %s): one server per data folder; several instances share a PostgreSQL database (--database-url)", dataDir, path)
		}
		return nil, fmt.Errorf("lock the data folder: %w", err)
	}
	return func() { f.Close() }, nil
}
