package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/control/webhook"
)

// TestClientWebhookCommands: the operator adds, lists and removes a
// client's endpoints; the secret shows once; the address rule holds unless
// lifted.
func TestClientWebhookCommands(t *testing.T) {
	dir := t.TempDir()
	out, _, err := pulsewire(t, "client", "create", "--data-dir", dir, "--env", "test", "--name", "acme", "--create-data-dir")
	if err != nil {
		t.Fatal(err)
	}
	client := map[string]string{}
	json.Unmarshal([]byte(out), &client)
	at := []string{"--data-dir", dir, "--env", "test"}
	webhooks := func(args ...string) (string, error) {
		out, _, err := pulsewire(t, append(append([]string{"client", "webhooks"}, args...), at...)...)
		return out, err
	}

	if _, err := webhooks("add", client["id"], "--url", "http://127.0.0.1:9/hook"); err == nil ||
		!strings.Contains(err.Error(), "loopback, private, link-local, reserved, unspecified or multicast") {
		t.Fatalf("loopback without leave: %v", err)
	}
	if _, err := webhooks("add", client["id"], "--url", "https://hooks.example/", "--events", "measure.ended,measure.created"); err == nil ||
		!strings.Contains(err.Error(), "events.1 must be one of the following values: measure.ended, measure.deleted") {
		t.Fatalf("unknown event: %v", err)
	}
	out, err = webhooks("add", client["id"], "--url", "http://127.0.0.1:9/hook", "--webhook-allow-private")
	var added struct{ ID, URL, Secret string }
	if err != nil || json.Unmarshal([]byte(out), &added) != nil || !strings.HasPrefix(added.Secret, "whsec_") ||
		!strings.Contains(out, `"measure.ended",`) || !strings.Contains(out, `"measure.deleted"`) {
		t.Fatalf("add: %v\n%s", err, out)
	}
	out, err = webhooks("list", client["id"])
	if err != nil || !strings.Contains(out, added.ID) || strings.Contains(out, added.Secret) {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if _, err := webhooks("list", "0f8e0b52-3c8c-4f4e-9a67-8b7f3f1d2a10"); err == nil || !strings.Contains(err.Error(), "no client with that id in test") {
		t.Fatalf("list of no client: %v", err)
	}
	if out, err := webhooks("remove", client["id"], added.ID); err != nil || !strings.Contains(out, "removed webhook endpoint "+added.ID) {
		t.Fatalf("remove: %v %s", err, out)
	}
	if _, err := webhooks("remove", client["id"], added.ID); err == nil || !strings.Contains(err.Error(), "has no webhook endpoint") {
		t.Fatalf("second remove: %v", err)
	}
	if out, err := webhooks("list", client["id"]); err != nil || strings.TrimSpace(out) != "[]" {
		t.Fatalf("list after remove: %v %s", err, out)
	}
	if _, err := webhooks("remove", client["id"]); err == nil {
		t.Fatal("remove without an endpoint id")
	}
}

// TestServeDeliversWebhooks: the server posts a measure's end to the
// endpoint the operator added, signed with its secret.
func TestServeDeliversWebhooks(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	id, key := createClient(t, bin, data, "test", "acme")
	got := make(chan *http.Request, 4)
	bodies := make(chan []byte, 4)
	rc := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r
		bodies <- b
	}))
	defer rc.Close()
	out := cli(t, bin, "client", "webhooks", "add", id, "--url", rc.URL, "--events", "measure.ended",
		"--data-dir", data, "--env", "test", "--webhook-allow-private")
	secret := field(t, []byte(out), "secret")

	srv := startServer(t, bin, data, "--webhook-allow-private")
	status, body := call(t, "POST", srv.test+"/measures/cppg/signal", key, cppgSignal(""))
	if status != 201 {
		t.Fatalf("run: %d %s", status, body)
	}
	select {
	case r := <-got:
		b := <-bodies
		if err := webhook.Verify(secret, r.Header.Get(webhook.SignatureHeader), b, time.Now(), 0); err != nil {
			t.Fatalf("signature: %v", err)
		}
		if field(t, b, "type") != "measure.ended" || field(t, b, "environment") != "test" || !strings.Contains(string(b), field(t, body, "id")) {
			t.Fatalf("payload %s", b)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no delivery:\n%s", srv.out)
	}
	if err := srv.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(srv.out.String(), secret) {
		t.Fatal("the secret is in the server's log")
	}
}
