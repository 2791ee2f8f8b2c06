// Command pulsewire is the PulseWire vital-signs service: the server, the
// client (API key) administration and an offline analyzer, in one binary.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand of the binary. Each lives in its own file.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists the subcommands in the order the help shows them.
var commands = []command{
	{"serve", "serve the Production and Test APIs", runServe},
	{"client", "create, list, update and deactivate clients (API keys), and their webhook endpoints", runClient},
	{"analyze", "measure a video, images or a signal file offline and print the result", runAnalyze},
	{"backup", "copy both environments' databases and media, while the server runs", runBackup},
	{"restore", "put a backup in place in a new data folder", runRestore},
	{"version", "print the version and source revision of this binary", runVersion},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if err != errUsage {
			fmt.Fprintln(os.Stderr, "pulsewire:", err)
		}
		os.Exit(2)
	}
}

var errUsage = fmt.Errorf("usage")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return errUsage
	}
	if isHelp(args[0]) {
		usage(stdout)
		return nil
	}
	if args[0] == "--version" || args[0] == "-version" {
		return runVersion(ctx, args[1:], stdout, stderr)
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "pulsewire: unknown command %q\n\n", args[0])
	usage(stderr)
	return errUsage
}

// isHelp reports whether arg asks for help: its text then goes to stdout,
// where it can be piped and read; usage after a mistake goes to stderr.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "PulseWire measures heart rate, breathing and more from a face on camera.")
	fmt.Fprintln(w, "\nUsage: pulsewire <command> [flags]\n\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'pulsewire <command> --help' for the flags of one command.")
}
