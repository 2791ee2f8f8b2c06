package main

import (
	"os"
	"runtime/debug"
)

// defaultMemoryLimitMiB is the default soft limit of the server's Go
// memory. The worst-case inputs (scripts/memory) keep the live heap under
// it at the default limits; without it the collector lets the heap grow to
// twice what is live before it runs, and the process tree past 500 MiB.
const defaultMemoryLimitMiB = 320

// setMemoryLimit sets the Go runtime's soft memory limit to mib MiB, unless
// GOMEMLIMIT says otherwise or mib is 0.
func setMemoryLimit(mib int64) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || mib <= 0 {
		return
	}
	debug.SetMemoryLimit(mib << 20)
}
