package main

import (
	"errors"
	"strings"
	"testing"
)

// TestHelpGoesToStdout: help asked for is the command's output, so that it
// can be piped (pulsewire serve --help | grep addr); the usage printed after
// a mistake is an error's, on stderr, and the exit is not zero.
func TestHelpGoesToStdout(t *testing.T) {
	commands := [][]string{
		{}, {"serve"}, {"analyze"}, {"backup"}, {"restore"}, {"version"},
		{"client"}, {"client", "create"}, {"client", "list"}, {"client", "update"}, {"client", "deactivate"},
		{"client", "webhooks"}, {"client", "webhooks", "add"}, {"client", "webhooks", "list"}, {"client", "webhooks", "remove"},
	}
	for _, cmd := range commands {
		name := strings.Join(append([]string{"pulsewire"}, cmd...), " ")
		for _, help := range []string{"--help", "-h"} {
			stdout, stderr, err := pulsewire(t, append(cmd, help)...)
			if err != nil || !strings.Contains(stdout, "Usage") || stderr != "" {
				t.Errorf("%s %s: err %v, stdout %d bytes, stderr %q", name, help, err, len(stdout), stderr)
			}
		}
		if len(cmd) == 0 || cmd[len(cmd)-1] == "client" || cmd[len(cmd)-1] == "webhooks" {
			continue // these take a subcommand, not flags
		}
		stdout, stderr, err := pulsewire(t, append(cmd, "--no-such-flag")...)
		usageShown := strings.Contains(stderr, "Usage") || cmd[0] == "version" // which takes no arguments, and says so
		if !errors.Is(err, errUsage) || stdout != "" || !usageShown {
			t.Errorf("%s --no-such-flag: err %v, stdout %q, stderr %q", name, err, stdout, stderr)
		}
	}
}
