package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestServeEndsSessions: SIGTERM reaches the hijacked session connections
// (http.Server.Shutdown alone does not): an open realtime session pushes
// its result, which is stored before the database closes, then closes
// with 1001; the process exits cleanly.
func TestServeEndsSessions(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	srv := startServer(t, bin, data)
	_, key := createClient(t, bin, data, "test", "sessions")
	status, body := call(t, "POST", srv.test+"/access-tokens", key, `{"permissions":[{"name":"measurement.realtime","maxSessions":1}],"duration":"10m"}`)
	if status != 201 {
		t.Fatalf("mint: %d %s", status, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.test, "http")+"/sessions", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	open, _ := json.Marshal(map[string]string{"type": "open", "token": field(t, body, "value"), "chain": "realtime"})
	if err := c.Write(ctx, websocket.MessageText, open); err != nil {
		t.Fatal(err)
	}
	read := func() (string, []byte) {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v\n%s", err, srv.out)
		}
		var m struct{ Type string }
		json.Unmarshal(b, &m)
		return m.Type, b
	}
	typ, b := read()
	if typ != "opened" {
		t.Fatalf("first message %s", b)
	}
	measure := field(t, b, "measureId")
	srv.cmd.Process.Signal(syscall.SIGTERM)
	for typ != "result" {
		typ, _ = read()
	}
	_, _, err = c.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway || ce.Reason != "shutting down" {
		t.Fatalf("after the result: %v", err)
	}
	select {
	case err := <-srv.done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, srv.out)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not stop")
	}
	srv = startServer(t, bin, data)
	if status, body := call(t, "GET", srv.test+"/measures/"+measure, key, ""); status != 200 || field(t, body, "status") != "ended" {
		t.Fatalf("the session's measure after the restart: %d %s", status, body)
	}
	srv.stop(t, syscall.SIGTERM)
}

func TestServeWebRTCFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  string // PULSEWIRE_WEBRTC_PUBLIC_IP
		want string
	}{
		{"reversed port range", []string{"--webrtc-udp-ports", "50100-50000"}, "", "usage"},
		{"port range without an end", []string{"--webrtc-udp-ports", "50000"}, "", "usage"},
		{"IPv6 public address", nil, "2001:db8::1", "WebRTC public address"},
		{"host name as public address", []string{"--webrtc-public-ip", "example.com"}, "", "WebRTC public address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("PULSEWIRE_WEBRTC_PUBLIC_IP", tc.env)
			}
			args := append([]string{"serve", "--data-dir", t.TempDir()}, tc.args...)
			_, stderr, err := pulsewire(t, args...)
			if err == nil || !strings.Contains(err.Error()+stderr, tc.want) {
				t.Fatalf("err %v, stderr %q; want %q", err, stderr, tc.want)
			}
		})
	}
	stdout, _, err := pulsewire(t, "serve", "--help")
	if err != nil || !strings.Contains(stdout, "PULSEWIRE_WEBRTC_PUBLIC_IP") || !strings.Contains(stdout, "PULSEWIRE_WEBRTC_UDP_PORTS") {
		t.Fatalf("help: %v %q", err, stdout)
	}
}
