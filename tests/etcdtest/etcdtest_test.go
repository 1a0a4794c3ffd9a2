package etcdtest

import "testing"

// TestFreeAddrsNeverRepeat: the nine ports of a 3-member Start are nine
// different ports, and none goes to two clusters that are both still there.
// Taken one at a time and closed at once, nine ports held the same port
// twice in about 1 group of 200.
func TestFreeAddrsNeverRepeat(t *testing.T) {
	seen := map[string]bool{}
	var all []string
	for range 300 {
		addrs := freeAddrs(t, 9)
		for _, a := range addrs {
			if seen[a] {
				t.Fatalf("port %s handed out twice", a)
			}
			seen[a] = true
		}
		all = append(all, addrs...)
	}
	releaseAddrs(all)
	if n := len(handedOut.ports); n != 0 {
		t.Fatalf("%d ports still handed out after their release", n)
	}
}

// TestLeaderOverTLS: Leader asks each member on its own client URL, which
// serves TLS and wants a client certificate when the cluster has WithTLS.
func TestLeaderOverTLS(t *testing.T) {
	c := Start(t, 3, WithTLS(NewTLS(t)))
	old := c.KillLeader()
	if next := c.AwaitLeader(); next == old || !next.Running() {
		t.Fatalf("AwaitLeader = %s after killing %s", next.Name, old.Name)
	}
}
