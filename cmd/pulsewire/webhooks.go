package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/storage"
)

// clientWebhooks runs `pulsewire client webhooks add|list|remove`.
func clientWebhooks(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, "pulsewire client webhooks: add, list or remove\n\n", clientUsage)
		return errUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, clientUsage)
		return nil
	case "add":
		return webhooksAdd(ctx, args[1:], stdout, stderr)
	case "list":
		return webhooksList(ctx, args[1:], stdout, stderr)
	case "remove":
		return webhooksRemove(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "pulsewire client webhooks: unknown subcommand %q (add, list or remove)\n\n%s", args[0], clientUsage)
	return errUsage
}

// withClient parses args (the client id, then want more positional
// arguments), opens the environment and finds the client, then runs do.
func withClient(ctx context.Context, f *clientFlags, args []string, want int, do func(*control.Service, storage.Client, []string) error) error {
	positional, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(positional) != 1+want {
		return fmt.Errorf("%s takes a client id%s, got %q", f.fs.Name(), strings.Repeat(" and an endpoint id", want), positional)
	}
	svc, db, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	c, err := svc.Client(ctx, positional[0])
	if control.ErrorCode(err) == control.NotFound {
		return fmt.Errorf("no client with that id in %s", svc.Env())
	}
	if err != nil {
		return err
	}
	return do(svc, c, positional[1:])
}

func webhooksAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newClientFlags("webhooks add", stdout, stderr, "url")
	return withClient(ctx, f, args, 0, func(svc *control.Service, c storage.Client, _ []string) error {
		var events []string
		for e := range strings.SplitSeq(f.events, ",") {
			events = append(events, strings.TrimSpace(e))
		}
		w, err := svc.CreateWebhookEndpoint(ctx, c, control.NewWebhookEndpoint{URL: f.url, Events: events})
		var e *control.Error
		if control.ErrorCode(err) == control.Invalid && errors.As(err, &e) {
			return fmt.Errorf("webhooks add: %s", strings.Join(e.Messages, "; "))
		}
		if err != nil {
			return err
		}
		v := control.NewWebhookEndpointView(w)
		v.Secret = &w.Secret
		return printJSON(stdout, v)
	})
}

func webhooksList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newClientFlags("webhooks list", stdout, stderr)
	return withClient(ctx, f, args, 0, func(svc *control.Service, c storage.Client, _ []string) error {
		ws, err := svc.WebhookEndpoints(ctx, c)
		if err != nil {
			return err
		}
		views := make([]control.WebhookEndpointView, len(ws))
		for i, w := range ws {
			views[i] = control.NewWebhookEndpointView(w)
		}
		return printJSON(stdout, views)
	})
}

func webhooksRemove(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newClientFlags("webhooks remove", stdout, stderr)
	return withClient(ctx, f, args, 1, func(svc *control.Service, c storage.Client, rest []string) error {
		err := svc.DeleteWebhookEndpoint(ctx, c, rest[0])
		if code := control.ErrorCode(err); code == control.NotFound || code == control.Invalid {
			return fmt.Errorf("the client has no webhook endpoint %q in %s", rest[0], svc.Env())
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed webhook endpoint %s\n", rest[0])
		return nil
	})
}
