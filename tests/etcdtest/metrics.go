package etcdtest

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Metrics are the Prometheus series of a cluster's members, by series
// ("name{label=\"value\",...}" as etcd prints it) to value, summed over the
// members (each, a process of its own, serves its own figures): such as
// etcd_debugging_mvcc_watcher_total (the watchers open) or
// grpc_server_msg_received_total by gRPC method (the requests and stream
// messages received).
type Metrics map[string]float64

// Sum adds the values of the series of metric name whose labels hold
// every one of with (each `label="value"`).
func (m Metrics) Sum(name string, with ...string) float64 {
	var sum float64
	for series, v := range m {
		base, labels, _ := strings.Cut(series, "{")
		if base != name {
			continue
		}
		all := true
		for _, w := range with {
			all = all && strings.Contains(labels, w)
		}
		if all {
			sum += v
		}
	}
	return sum
}

// Metrics reads the figures of every running member, on its own client
// URL (not through its Proxy, whose counts it leaves alone), and sums them.
// Plain http members only.
func (c *Cluster) Metrics() Metrics {
	c.t.Helper()
	out := Metrics{}
	read := 0
	for _, m := range c.Members {
		if !m.Running() || m.listenURL.Scheme != "http" {
			continue
		}
		one, err := readMetrics("http://" + m.listenURL.Host + "/metrics")
		if err != nil {
			c.t.Fatalf("etcdtest: reading the metrics of %s: %v", m.Name, err)
		}
		for series, v := range one {
			out[series] += v
		}
		read++
	}
	if read == 0 {
		c.t.Fatalf("etcdtest: no running plain-http member to read the metrics of")
	}
	return out
}

func readMetrics(url string) (Metrics, error) {
	cli := http.Client{Timeout: readyTimeout}
	resp, err := cli.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	out := Metrics{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// DirectEndpoints are the members' own client URLs, which no Proxy sees:
// for a test's own reads that must not count in the proxies' figures.
func (c *Cluster) DirectEndpoints() []string {
	var out []string
	for _, m := range c.Members {
		out = append(out, m.listenURL.String())
	}
	return out
}
