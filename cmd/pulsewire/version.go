package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// buildVersion describes the binary from what the Go toolchain recorded in
// it: the module's version (from the repository's tag, or a pseudo-version
// of the commit), the revision it was built from and whether the work tree
// had changes that no commit holds.
type buildVersion struct {
	Module, Version      string
	Revision, Time       string
	Modified, HasVCSInfo bool
	Go                   string
}

func readBuildVersion() buildVersion {
	v := buildVersion{Module: "github.com/pulsewire/pulsewire", Version: "unknown", Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Module, v.Version = info.Main.Path, info.Main.Version
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision, v.HasVCSInfo = s.Value, true
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the one line the banner shows.
func (v buildVersion) String() string {
	s := v.Version
	if s == "(devel)" && v.Revision == "" {
		return "(a development build)"
	}
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		s += " (" + rev
		if v.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s
}

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		if isHelp(args[0]) {
			fmt.Fprintln(stdout, "Usage: pulsewire version\n\nPrints the module version, the source revision the binary was built from and the Go version.")
			return nil
		}
		fmt.Fprintf(stderr, "version takes no arguments, got %q\n", args)
		return errUsage
	}
	v := readBuildVersion()
	fmt.Fprintf(stdout, "pulsewire %s\n", v.Version)
	fmt.Fprintf(stdout, "module    %s\n", v.Module)
	if v.HasVCSInfo {
		modified := ""
		if v.Modified {
			modified = " (built with uncommitted changes)"
		}
		fmt.Fprintf(stdout, "revision  %s%s\n", v.Revision, modified)
		if v.Time != "" {
			fmt.Fprintf(stdout, "committed %s\n", v.Time)
		}
	} else {
		// go run, go test and builds outside a repository record none.
		fmt.Fprintln(stdout, "revision  unknown (built without version control information)")
	}
	fmt.Fprintf(stdout, "go        %s %s/%s\n", v.Go, runtime.GOOS, runtime.GOARCH)
	return nil
}
