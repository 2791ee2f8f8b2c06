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
	for range 3 {
		c, err := net.Dial("tcp", strings.TrimPrefix(srv.test, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /measures/cppg/signal HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n", testKey)
		// 40 KiB/s of blanks: above the pace, so the place stays taken.
		go func() {
			blanks := strings.Repeat(" ", 4<<10)
			for {
				if _, err := c.Write([]byte(blanks)); err != nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
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
