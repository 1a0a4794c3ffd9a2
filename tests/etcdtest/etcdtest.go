// Package etcdtest runs real etcd members on 127.0.0.1, in temporary
// directories, for the tests of team mode (docs/team.md). A test starts a
// Cluster of one or three members, stops and restarts members to make
// faults, and reads its client endpoints; everything is stopped by
// t.Cleanup. Each member is a process of its own, etcdtest-server -member
// (the embedded server, go.etcd.io/etcd/server/v3/embed), built without the
// race detector (ServerEnv); the test process keeps a fault-making Proxy in
// front of each. Nothing waits by sleeping: Start and Restart return once
// each member says it is ready (its ReadyNotify).
package etcdtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	mathrand "math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// ElectionTimeout is the members' election timeout (etcd's default is
// 1 s): short heartbeats keep elections quick on loopback.
const ElectionTimeout = 500 * time.Millisecond

// readyTimeout bounds the wait for a member to be ready (a 3-member
// cluster elects a leader within a few election timeouts).
const readyTimeout = 30 * time.Second

// T is what Start needs of a test: testing.TB has it, and so may a
// program that is not a test (tests/bench).
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	TempDir() string
	Cleanup(func())
}

var _ T = testing.TB(nil)

// Cluster is a set of etcd members that know each other.
type Cluster struct {
	t       T
	Members []*Member
	tls     *TLS
	quota   int64 // WithQuota
}

// Member is one etcd server, a child process. Clients reach it through a Proxy of
// this package (clientURL; Member.Proxy makes its faults), which Stop
// closes first with every connection through it, as a crash would: the
// member itself then stops at once instead of waiting out its clients'
// watch streams.
type Member struct {
	c         *Cluster
	Name      string
	dir       string
	clientURL url.URL // the proxy's
	listenURL url.URL // the member's own client URL
	peerURL   url.URL
	proc      *process // nil while stopped
	proxy     *Proxy   // kept across Stop and Restart, with its faults
}

// TLS is a certificate authority made by the test and the files of a
// server certificate (for 127.0.0.1) and a client certificate it signed,
// all PEM files in a temporary directory.
type TLS struct {
	CAFile, ServerCert, ServerKey, ClientCert, ClientKey string
}

// Option changes how Start configures the members.
type Option func(*Cluster)

// WithTLS serves clients over TLS with the certificates of tls and requires
// a client certificate signed by its CA.
func WithTLS(tls *TLS) Option { return func(c *Cluster) { c.tls = tls } }

// Start starts n members (1 or 3, say) on free ports of 127.0.0.1 and waits
// until every one is ready. They are stopped at the end of the test.
func Start(t T, n int, opts ...Option) *Cluster {
	t.Helper()
	c := &Cluster{t: t}
	for _, o := range opts {
		o(c)
	}
	scheme := "http"
	if c.tls != nil {
		scheme = "https"
	}
	root := t.TempDir()
	addrs := freeAddrs(t, 3*n)
	for i := range n {
		m := &Member{c: c, Name: fmt.Sprintf("m%d", i), dir: filepath.Join(root, fmt.Sprintf("m%d", i))}
		m.clientURL = url.URL{Scheme: scheme, Host: addrs[3*i]}
		m.listenURL = url.URL{Scheme: scheme, Host: addrs[3*i+1]}
		m.peerURL = url.URL{Scheme: "http", Host: addrs[3*i+2]}
		c.Members = append(c.Members, m)
	}
	t.Cleanup(func() {
		c.Stop()
		releaseAddrs(addrs)
	})
	for _, m := range c.Members {
		if err := m.start("new"); err != nil {
			t.Fatalf("etcdtest: starting member %s: %v", m.Name, err)
		}
	}
	for _, m := range c.Members {
		m.waitReady()
	}
	return c
}

// Endpoints returns the client URLs of every member.
func (c *Cluster) Endpoints() []string {
	var out []string
	for _, m := range c.Members {
		out = append(out, m.clientURL.String())
	}
	return out
}

// Stop stops every running member, all at once (one by one, each of the
// last ones would wait for its gone peers).
func (c *Cluster) Stop() {
	var wg sync.WaitGroup
	for _, m := range c.Members {
		wg.Go(m.Stop)
	}
	wg.Wait()
}

// Restart starts every stopped member again, from its data, and waits until
// all are ready.
func (c *Cluster) Restart() {
	c.t.Helper()
	var stopped []*Member
	for _, m := range c.Members {
		if m.proc == nil {
			if err := m.start("existing"); err != nil {
				c.t.Fatalf("etcdtest: restarting member %s: %v", m.Name, err)
			}
			stopped = append(stopped, m)
		}
	}
	for _, m := range stopped {
		m.waitReady()
	}
}

// AwaitLeader waits until every running member follows one leader that is
// running, and returns it: after a member's Stop, the others first elect a
// new one, and a write in between fails (etcd's "request timed out",
// "leader changed").
func (c *Cluster) AwaitLeader() *Member {
	c.t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(readyTimeout)
	for {
		if m := c.Leader(); m != nil {
			return m
		}
		select {
		case <-tick.C:
		case <-deadline:
			c.t.Fatalf("etcdtest: no leader among the running members after %s", readyTimeout)
			return nil
		}
	}
}

// KillLeader waits for a leader, stops it as a crash would (Member.Stop),
// and returns it. AwaitLeader then waits for the next one.
func (c *Cluster) KillLeader() *Member {
	c.t.Helper()
	m := c.AwaitLeader()
	m.Stop()
	return m
}

// Leader is the leader every running member follows, when they agree on
// a running one; else (or when one does not answer within statusTimeout)
// nil. Each is asked on its own client URL, past its Proxy's faults.
func (c *Cluster) Leader() *Member {
	byID := map[uint64]*Member{}
	var lead uint64
	for _, m := range c.Members {
		if m.proc == nil {
			continue
		}
		id, l, err := m.proc.status()
		if err != nil || l == 0 || (lead != 0 && l != lead) {
			return nil
		}
		byID[id] = m
		lead = l
	}
	return byID[lead]
}

// Running says whether the member runs (started and not stopped).
func (m *Member) Running() bool { return m.proc != nil }

// Proxy is the fault-making proxy in front of the member's client port:
// every client connection goes through it.
func (m *Member) Proxy() *Proxy { return m.proxy }

// Endpoint is the member's client URL.
func (m *Member) Endpoint() string { return m.clientURL.String() }

// Stop stops the member (its data stays for Restart) as a crash would: its
// process is killed, with no leadership transfer. No-op when stopped.
func (m *Member) Stop() {
	if m.proxy != nil {
		m.proxy.Close()
	}
	if m.proc != nil {
		m.proc.kill()
		m.proc = nil
	}
}

// start starts the member's process (state "new" or "existing") and opens
// its proxy; waitReady waits until the member is ready.
func (m *Member) start(state string) error {
	p, err := m.spawn(state)
	if err != nil {
		return err
	}
	m.proc = p
	if m.proxy == nil {
		m.proxy = newProxy(m.clientURL.Host, m.listenURL.Host)
	}
	if err := m.proxy.open(); err != nil {
		p.kill()
		m.proc = nil
		return err
	}
	return nil
}

func (m *Member) waitReady() {
	m.c.t.Helper()
	p := m.proc
	select {
	case ok := <-p.ready:
		if ok {
			return
		}
		select { // for the whole of its stderr and its exit status
		case <-p.exited:
		case <-time.After(readyTimeout):
		}
		m.c.t.Fatalf("etcdtest: member %s failed: %v\n%s", m.Name, p.cmd.ProcessState, p.stderr)
	case <-time.After(readyTimeout):
		m.c.t.Fatalf("etcdtest: member %s not ready after %s\n%s", m.Name, readyTimeout, p.stderr)
	}
}

// handedOut are the ports freeAddrs gave to clusters of this process that
// are not cleaned up yet: a member stopped for Restart keeps its ports,
// which another Start must not take meanwhile.
var handedOut struct {
	sync.Mutex
	ports map[string]bool
}

// freeAddrs returns n addresses 127.0.0.1:PORT, on n different ports free
// right now and not handed out to another cluster of this process that is
// still there (releaseAddrs gives them back). The listeners that
// found them stay open until all n are chosen: a port closed at once may be
// the very next one the kernel picks, and a 3-member Start's nine ports,
// taken one by one, held one port twice in about 1 run of 200 (the second
// member then failed with "address already in use").
func freeAddrs(t T, n int) []string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[string]bool{}
	}
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	var out []string
	for len(out) < n {
		l, err := listenFree()
		if err != nil {
			t.Fatalf("etcdtest: no free port: %v", err)
		}
		held = append(held, l)
		if addr := l.Addr().String(); !handedOut.ports[addr] {
			handedOut.ports[addr] = true
			out = append(out, addr)
		}
	}
	return out
}

// releaseAddrs gives back what freeAddrs handed out, once its cluster is
// cleaned up.
func releaseAddrs(addrs []string) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for _, a := range addrs {
		delete(handedOut.ports, a)
	}
}

// portFloor is the lowest port listenFree picks.
const portFloor = 10000

// listenFree listens on a free port of 127.0.0.1 below the range from
// which the kernel gives outgoing connections their local ports
// (ephemeralFloor): a member stopped for Restart leaves its ports unbound
// meanwhile, and one of that range could be taken by any connection of
// the machine (a daemon dialling that very member again), failing the
// restart with "address already in use". Where that range leaves no room
// below it, the kernel picks.
func listenFree() (net.Listener, error) {
	if top := ephemeralFloor(); top-portFloor >= 1000 {
		for range 100 {
			if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(portFloor+mathrand.IntN(top-portFloor))); err == nil {
				return l, nil
			}
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// ephemeralFloor is the first port of the kernel's range for outgoing
// connections: Linux says it in ip_local_port_range; elsewhere it is
// IANA's 49152 (macOS and Windows use it).
func ephemeralFloor() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if f := strings.Fields(string(data)); err == nil && len(f) == 2 {
		if low, err := strconv.Atoi(f[0]); err == nil {
			return low
		}
	}
	return 49152
}

// NewTLS makes a certificate authority, a server certificate for
// 127.0.0.1 and a client certificate, in a temporary directory.
func NewTLS(t testing.TB) *TLS {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "etcdtest CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	out := &TLS{CAFile: filepath.Join(dir, "ca.pem")}
	writePEM(t, out.CAFile, "CERTIFICATE", caDER)
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		writePEM(t, certFile, "CERTIFICATE", der)
		writePEM(t, keyFile, "PRIVATE KEY", kder)
		return certFile, keyFile
	}
	out.ServerCert, out.ServerKey = leaf(2, "server", x509.ExtKeyUsageServerAuth)
	out.ClientCert, out.ClientKey = leaf(3, "client", x509.ExtKeyUsageClientAuth)
	return out
}

func writePEM(t testing.TB, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
