package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/storage"
)

const clientUsage = `Usage:
  pulsewire client create --env production|test --name N [--data-dir D] [--variables hr,br,...] [--monthly-credits N]
  pulsewire client list --env production|test [--data-dir D]
  pulsewire client update ID --env production|test [--data-dir D] [--variables ...] [--monthly-credits N|unlimited]
  pulsewire client deactivate ID --env production|test [--data-dir D]
  pulsewire client webhooks add ID --url URL --env production|test [--data-dir D] [--events measure.ended,measure.deleted]
  pulsewire client webhooks list ID --env production|test [--data-dir D]
  pulsewire client webhooks remove ID ENDPOINT_ID --env production|test [--data-dir D]

Administers the clients (company accounts) of one environment, safely while
the server runs. --env is required, and so is --name for create.
--data-dir is the server's data folder (default ./data): it must exist
already, which it does once "pulsewire serve" has started with it;
--create-data-dir makes a new one instead.

create prints {"id","name","env","apiKey"}: the API key is shown this once
and only its hash is kept. --variables defaults to every variable,
--monthly-credits to unlimited. A deactivated client's key and tokens stop
working on their next request, on every instance of the server.

webhooks administers the endpoints a client's measure events are posted
to, as the client does with /webhook-endpoints: add prints the endpoint
with its signing secret, shown this once; --events defaults to both
events. An endpoint on a loopback or private address is refused unless
--webhook-allow-private is given (the server needs it too, to post there).

With several instances on PostgreSQL, give the database as the server has
it: --database-url postgres://... (or PULSEWIRE_DATABASE_URL) instead of
--data-dir. --media-url is accepted too, so that one set of settings serves
both commands, but clients have no media: it is not opened.
`

// clientFlags are the flags every client subcommand takes.
type clientFlags struct {
	fs             *flag.FlagSet
	stdout         io.Writer // where help asked for goes
	store          storeConfig
	env            string
	createDataDir  bool
	name           string
	variables      string
	monthlyCredits string
	url, events    string
	allowPrivate   bool
}

func newClientFlags(sub string, stdout, stderr io.Writer, extra ...string) *clientFlags {
	f := &clientFlags{fs: flag.NewFlagSet("client "+sub, flag.ContinueOnError), stdout: stdout}
	f.fs.SetOutput(stderr)
	f.fs.Usage = func() {
		fmt.Fprint(f.fs.Output(), clientUsage, "\nFlags of client ", sub, ":\n")
		f.fs.PrintDefaults()
	}
	storeFlags(f.fs, &f.store)
	f.fs.BoolVar(&f.createDataDir, "create-data-dir", false, "create the data folder when it does not exist yet (without it, a missing folder is an error)")
	f.fs.StringVar(&f.env, "env", "", "production or test (required)")
	for _, name := range extra {
		switch name {
		case "name":
			f.fs.StringVar(&f.name, "name", "", "the client's name, 1 to 200 characters (required)")
		case "variables":
			f.fs.StringVar(&f.variables, "variables", "", "comma-separated variables the client is entitled to")
		case "monthly-credits":
			f.fs.StringVar(&f.monthlyCredits, "monthly-credits", "", "measurements per calendar month (UTC), or unlimited")
		case "url":
			f.fs.StringVar(&f.url, "url", "", "the http or https URL events are posted to")
			f.fs.StringVar(&f.events, "events", strings.Join(control.WebhookEvents(), ","), "comma-separated events the endpoint wants")
			f.fs.BoolVar(&f.allowPrivate, "webhook-allow-private", false, "allow an endpoint on a loopback, private or link-local address")
		}
	}
	withEnvNames(f.fs)
	return f
}

// parse reads args, with positional arguments allowed among the flags
// (client update ID --variables hr), and returns the positional ones.
func (f *clientFlags) parse(args []string) ([]string, error) {
	var positional []string
	for {
		if err := parseFlags(f.fs, args, f.stdout); err != nil {
			return nil, err
		}
		if f.fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, f.fs.Arg(0))
		args = f.fs.Args()[1:]
	}
}

// set reports whether flag name was given, on the command line or by its
// environment variable.
func (f *clientFlags) set(name string) bool {
	found := false
	f.fs.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
	return found
}

// open opens the environment's database in the data folder. A folder
// that holds no database of that environment is refused rather than
// created: a mistyped --data-dir would otherwise start an empty one,
// whose keys the server never sees.
func (f *clientFlags) open(ctx context.Context) (*control.Service, *storage.DB, error) {
	if f.env == "" {
		return nil, nil, fmt.Errorf("--env is required: production or test")
	}
	env, err := control.ParseEnv(f.env)
	if err != nil {
		return nil, nil, fmt.Errorf("--env: %w", err)
	}
	if err := f.store.check(); err != nil {
		return nil, nil, err
	}
	if f.store.databaseURL == "" && !f.createDataDir {
		dir, err := filepath.Abs(f.store.dataDir)
		if err != nil {
			return nil, nil, fmt.Errorf("--data-dir: %w", err)
		}
		if _, err := os.Stat(filepath.Join(dir, environmentDB(env))); errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("no %s data in %s (no %s there): give the data folder of the server with --data-dir, "+
				"or add --create-data-dir to create a new one", env, dir, environmentDB(env))
		}
	}
	db, err := f.store.openDatabase(ctx, env, storage.Options{})
	if err != nil {
		return nil, nil, err
	}
	var opts []control.ServiceOption
	if f.allowPrivate {
		opts = append(opts, control.AllowPrivateWebhooks())
	}
	// A client has no media: the commands never reach them.
	return control.NewService(env, db, nil, opts...), db, nil
}

// variablesFlag reads --variables: names separated by commas; empty means
// no variable at all.
func (f *clientFlags) variablesFlag() []string {
	if strings.TrimSpace(f.variables) == "" {
		return []string{}
	}
	names := strings.Split(f.variables, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	return names
}

// creditsFlag reads --monthly-credits: a count >= 0, or unlimited (nil).
func (f *clientFlags) creditsFlag() (*int64, error) {
	if f.monthlyCredits == "unlimited" {
		return nil, nil
	}
	n, err := strconv.ParseInt(f.monthlyCredits, 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("--monthly-credits: %q is neither a count >= 0 nor unlimited", f.monthlyCredits)
	}
	return &n, nil
}

func runClient(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, clientUsage)
		return errUsage
	}
	if isHelp(args[0]) {
		fmt.Fprint(stdout, clientUsage)
		return nil
	}
	var run func(context.Context, []string, io.Writer, io.Writer) error
	switch args[0] {
	case "create":
		run = clientCreate
	case "list":
		run = clientList
	case "update":
		run = clientUpdate
	case "deactivate":
		run = clientDeactivate
	case "webhooks":
		run = clientWebhooks
	default:
		fmt.Fprintf(stderr, "pulsewire client: unknown subcommand %q\n\n%s", args[0], clientUsage)
		return errUsage
	}
	return helpIsDone(run(ctx, args[1:], stdout, stderr))
}

func clientCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newClientFlags("create", stdout, stderr, "name", "variables", "monthly-credits")
	if err := f.parseNone(args); err != nil {
		return err
	}
	if !f.set("name") {
		return fmt.Errorf("--name is required: the client's name, 1 to 200 characters")
	}
	n := control.NewClient{Name: f.name}
	if f.set("variables") {
		n.Variables = f.variablesFlag()
	}
	if f.set("monthly-credits") {
		credits, err := f.creditsFlag()
		if err != nil {
			return err
		}
		n.MonthlyCredits = credits
	}
	svc, db, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	c, key, err := svc.CreateClient(ctx, n)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Env    string `json:"env"`
		APIKey string `json:"apiKey"`
	}{c.ID, c.Name, string(svc.Env()), key})
}

// clientView is a client as the list, update and deactivate commands show it.
type clientView struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Env            string   `json:"env"`
	Variables      []string `json:"variables"`
	MonthlyCredits *int64   `json:"monthlyCredits"` // null: unlimited
	Active         bool     `json:"active"`
	CreatedAt      string   `json:"createdAt"`
}

func newClientView(env control.Env, c storage.Client) clientView {
	return clientView{c.ID, c.Name, string(env), c.Variables, c.MonthlyCredits, c.Active, c.CreatedAt.Format(time.RFC3339)}
}

func clientList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newClientFlags("list", stdout, stderr)
	if err := f.parseNone(args); err != nil {
		return err
	}
	svc, db, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	clients, err := svc.Clients(ctx)
	if err != nil {
		return err
	}
	views := make([]clientView, len(clients))
	for i, c := range clients {
		views[i] = newClientView(svc.Env(), c)
	}
	return printJSON(stdout, views)
}

func clientUpdate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newClientFlags("update", stdout, stderr, "variables", "monthly-credits")
	id, err := f.parseID(args)
	if err != nil {
		return err
	}
	var u control.ClientUpdate
	if f.set("variables") {
		u.Variables = f.variablesFlag()
	}
	if f.set("monthly-credits") {
		credits, err := f.creditsFlag()
		if err != nil {
			return err
		}
		u.MonthlyCredits = &credits
	}
	if u.Variables == nil && u.MonthlyCredits == nil {
		return fmt.Errorf("client update: nothing to change (give --variables or --monthly-credits)")
	}
	return f.change(ctx, stdout, func(svc *control.Service) (storage.Client, error) { return svc.UpdateClient(ctx, id, u) })
}

func clientDeactivate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newClientFlags("deactivate", stdout, stderr)
	id, err := f.parseID(args)
	if err != nil {
		return err
	}
	return f.change(ctx, stdout, func(svc *control.Service) (storage.Client, error) { return svc.DeactivateClient(ctx, id) })
}

// parseNone reads the flags of create and list, which take no argument.
func (f *clientFlags) parseNone(args []string) error {
	positional, err := f.parse(args)
	if err == nil && len(positional) > 0 {
		err = fmt.Errorf("%s takes no arguments, got %q", f.fs.Name(), positional)
	}
	return err
}

// parseID reads the flags and the one client id of update and deactivate.
func (f *clientFlags) parseID(args []string) (string, error) {
	positional, err := f.parse(args)
	if err != nil {
		return "", err
	}
	if len(positional) != 1 {
		return "", fmt.Errorf("%s takes one client id, got %q", f.fs.Name(), positional)
	}
	return positional[0], nil
}

// change applies a change to a client and prints the client as it is now.
func (f *clientFlags) change(ctx context.Context, stdout io.Writer, apply func(*control.Service) (storage.Client, error)) error {
	svc, db, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	c, err := apply(svc)
	if control.ErrorCode(err) == control.NotFound {
		return fmt.Errorf("no client with that id in %s", svc.Env())
	}
	if err != nil {
		return err
	}
	return printJSON(stdout, newClientView(svc.Env(), c))
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
