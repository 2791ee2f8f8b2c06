package session

import (
	"testing"
	"time"
)

// TestConfigScan: a scan goes on for a faint pulse up to twice its
// duration unless told otherwise, and never less than its duration; its
// duration, not its longest, must fit in a session's longest life.
func TestConfigScan(t *testing.T) {
	if got := (Config{ScanDuration: 20 * time.Second}).withDefaults().ScanMaxDuration; got != 40*time.Second {
		t.Errorf("default longest scan of a 20 s scan: %v, want 40s", got)
	}
	if got := (Config{}).withDefaults().ScanMaxDuration; got != time.Minute {
		t.Errorf("default longest scan: %v, want 1m", got)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"the defaults", Config{}, true},
		{"never longer than the duration", Config{ScanDuration: 30 * time.Second, ScanMaxDuration: 30 * time.Second}, true},
		{"shorter than the duration", Config{ScanDuration: 30 * time.Second, ScanMaxDuration: 29 * time.Second}, false},
		{"longer than a session", Config{ScanMaxDuration: time.Minute, MaxLength: 45 * time.Second}, true},
		{"a duration just within a session", Config{ScanDuration: time.Minute, MaxLength: time.Minute + time.Second}, true},
		{"a duration as long as a session", Config{ScanDuration: time.Minute, MaxLength: time.Minute}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok %v", err, tc.ok)
			}
		})
	}
}
