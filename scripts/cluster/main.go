// Command cluster runs PulseWire as several instances behind a load
// balancer, on this machine's loopback: a throwaway PostgreSQL cluster, an
// S3-compatible object store (versitygw), N instances of `pulsewire serve`
// sharing both, and HAProxy in front, round robin. It prints the addresses
// and how to create a client, then runs until interrupted and removes
// everything.
//
//	go run ./scripts/cluster [-instances 3]       (make cluster)
//	go run ./scripts/cluster -bench [-seconds 15]  (part of make bench)
//
// With -bench it measures, through the proxy, with 1 and then 3 instances:
// POST /access-tokens and POST /measures/cppg/signal with a 30-second
// contact signal, each by concurrent clients for a while, and prints the
// throughput, the latency percentiles and the CPU time per request of the
// instances and of PostgreSQL.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

var httpClient = &http.Client{Timeout: 30 * time.Second}

func main() {
	instances := flag.Int("instances", 3, "instances of pulsewire serve")
	bench := flag.Bool("bench", false, "measure throughput and latency with 1 and 3 instances, then exit")
	seconds := flag.Duration("seconds", 15*time.Second, "with -bench: how long each load runs")
	flag.Parse()
	dir, err := os.MkdirTemp("", "pulsewire-cluster-bin-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	bin, err := buildBinary(dir)
	if err != nil {
		fail(err)
	}
	if *bench {
		if err := runBench(bin, *seconds); err != nil {
			fail(err)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(os.Stderr, "starting PostgreSQL, the object store, %d instances and HAProxy...\n", *instances)
	c, err := startCluster(ctx, clusterOptions{instances: *instances, bin: bin, durable: true})
	if err != nil {
		fail(err)
	}
	defer c.stop()
	fmt.Printf(`
PulseWire is running as %[1]d instances behind HAProxy.
  Production  %[2]s
  Test        %[3]s
  Database    %[4]s (schemas production and test)
  Media       %[5]s
  Instances  `, *instances, c.prod, c.test, c.databaseURL(), c.mediaURL())
	for _, in := range c.instances {
		fmt.Printf(" %s", in.prod)
	}
	fmt.Printf(`

Create a client on Test (any instance, or none, may be running):
  AWS_ACCESS_KEY_ID=%[1]s AWS_SECRET_ACCESS_KEY=%[2]s \
  %[3]s client create --env test --name demo --database-url '%[4]s'
then send its API key to %[5]s as to a single server. Ctrl-C stops everything.
`, c.s3.AccessKey, c.s3.SecretKey, bin, c.databaseURL(), c.test)
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "stopping...")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "cluster:", err)
	os.Exit(1)
}
