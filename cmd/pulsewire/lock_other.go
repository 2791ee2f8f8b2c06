//go:build !unix

package main

// lockDataDir cannot lock a folder here: the server is not known to be
// alone, and repairs what a crash left after the run limit, as an instance
// among others does.
func lockDataDir(string) (unlock func(), err error) { return nil, nil }
