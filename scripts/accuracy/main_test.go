package main

import (
	"os"
	"testing"
)

func mkTemp() (string, error) { return os.MkdirTemp("", "pulsewire-accuracy-") }

func TestMain(m *testing.M) {
	code := m.Run()
	if tempPath != "" {
		os.RemoveAll(tempPath)
	}
	os.Exit(code)
}
