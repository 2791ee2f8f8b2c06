package main

import "errors"

// synthetic scores the generated clips; it needs the clip generator.
func synthetic(dir string, verbose bool) (*table, error) {
	return nil, errors.New("synthetic clips: generator not available yet")
}
