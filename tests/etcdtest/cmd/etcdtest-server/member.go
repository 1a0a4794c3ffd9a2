package main

import (
	"bufio"
	"flag"
	"fmt"
	"net/url"
	"os"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/agentd/agentd/tests/etcdtest"
)

// memberFlags are the flags of -member mode: one member of an
// etcdtest.Cluster, which the test process starts as a child (package
// etcdtest, "Member").
type memberFlags struct {
	name, listenClient, advertiseClient, listenPeer string
	initialCluster, state                           string
	quota                                           int64
	tlsCA, tlsCert, tlsKey                          string
}

func (f *memberFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.name, "name", "m0", "-member: the member's name")
	fs.StringVar(&f.listenClient, "listen-client", "", "-member: the client URL it listens on")
	fs.StringVar(&f.advertiseClient, "advertise-client", "", "-member: the client URL it advertises (the test's proxy)")
	fs.StringVar(&f.listenPeer, "listen-peer", "", "-member: the peer URL it listens on and advertises")
	fs.StringVar(&f.initialCluster, "initial-cluster", "", "-member: every member, name=peerURL,...")
	fs.StringVar(&f.state, "state", embed.ClusterStateFlagNew, "-member: new or existing")
	fs.Int64Var(&f.quota, "quota", 0, "-member: the database quota in bytes (0: etcd's default)")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "-member: serve clients over TLS: the CA that signs client certificates")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "-member: the server certificate")
	fs.StringVar(&f.tlsKey, "tls-key", "", "-member: the server certificate's key")
}

// config is the one configuration of an etcdtest member.
func (f *memberFlags) config(dir string) (*embed.Config, error) {
	var urls [3]url.URL
	for i, s := range []string{f.listenClient, f.advertiseClient, f.listenPeer} {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("bad URL %q", s)
		}
		urls[i] = *u
	}
	cfg := embed.NewConfig()
	cfg.Name = f.name
	cfg.Dir = dir
	// Quiet: a member stopped by a test logs its closed listeners as errors.
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ListenClientUrls = []url.URL{urls[0]}
	cfg.AdvertiseClientUrls = []url.URL{urls[1]}
	cfg.ListenPeerUrls = []url.URL{urls[2]}
	cfg.AdvertisePeerUrls = []url.URL{urls[2]}
	cfg.ClusterState = f.state
	cfg.InitialClusterToken = "etcdtest"
	cfg.InitialCluster = f.initialCluster
	cfg.TickMs, cfg.ElectionMs = 50, uint(etcdtest.ElectionTimeout/time.Millisecond)
	// The cheapest password hashing: etcd's default cost takes seconds per
	// authentication on a loaded machine, beyond agentd's dial bound.
	cfg.BcryptCost = 4
	// No fsync: the members' data lives as long as the test, in the page
	// cache, which keeps it across a member's kill and restart; an fsync on
	// a disk that other jobs share can take longer than agentd's bound on a
	// call.
	cfg.UnsafeNoFsync = true
	cfg.QuotaBackendBytes = f.quota
	if f.tlsCA != "" {
		cfg.ClientTLSInfo.CertFile = f.tlsCert
		cfg.ClientTLSInfo.KeyFile = f.tlsKey
		cfg.ClientTLSInfo.TrustedCAFile = f.tlsCA
		cfg.ClientTLSInfo.ClientCertAuth = true
	}
	return cfg, nil
}

// runMember serves one member until its stdin ends (the test ended, or
// died: no member outlives its test) or it fails. It prints "ready" once
// the member is ready.
func runMember(f *memberFlags, dir string) error {
	if dir == "" {
		return fmt.Errorf("-member needs -dir")
	}
	cfg, err := f.config(dir)
	if err != nil {
		return err
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
		}
		os.Exit(0)
	}()
	select {
	case <-e.Server.ReadyNotify():
		fmt.Println("ready")
	case err := <-e.Err():
		return err
	}
	return <-e.Err()
}
