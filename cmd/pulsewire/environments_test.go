package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestEnvironmentsShareNoPool: slow uploads on Test (a body trickling in
// just above the minimum pace) take every place Test has, and Production
// still measures at once: the environments share no pool.
func TestEnvironmentsShareNoPool(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	_, testKey := createClient(t, bin, data, "test", "stalls")
	_, prodKey := createClient(t, bin, data, "production", "measures")
	srv := startServer(t, bin, data, "--workers", "1", "--queue", "0", "--uploads", "2")
	// Each slow upload dials again when its connection ends: a request of
	// the polling below may have held the place when it arrived (on a busy
	// machine the slow ones can be handled after the first poll), and then
	// it was turned away at once.
	done := make(chan struct{})
	defer close(done)
	for range 3 {
		go func() {
			blanks := strings.Repeat(" ", 4<<10)
			for {
				select {
				case <-done:
					return
				default:
				}
				c, err := net.Dial("tcp", strings.TrimPrefix(srv.test, "http://"))
				if err != nil {
					return
				}
				fmt.Fprintf(c, "POST /measures/cppg/signal HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
					"Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n", testKey)
				// 40 KiB/s of blanks: above the pace, so the place stays taken.
			trickle:
				for {
					select {
					case <-done:
						break trickle
					default:
					}
					if _, err := c.Write([]byte(blanks)); err != nil {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
				c.Close()
			}
		}()
	}
	// Test is full...
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _ := call(t, "POST", srv.test+"/measures/cppg/signal", testKey, contactSignal())
		if status == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Test never filled up: %d", status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// ...and Production is not.
	status, body := call(t, "POST", srv.prod+"/measures/cppg/signal", prodKey, contactSignal())
	if status != http.StatusCreated {
		t.Fatalf("Production beside a full Test: %d %s", status, body)
	}
}
