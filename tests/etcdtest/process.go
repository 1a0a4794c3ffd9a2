package etcdtest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/agentd/agentd/tests/lsptest"
)

// ServerEnv names the environment variable that holds the path of a built
// etcdtest-server (tests/etcdtest/cmd/etcdtest-server), the program each
// member runs as. Unset, the first member of the process builds it.
const ServerEnv = "AGENTD_ETCDTEST_SERVER"

// statusTimeout bounds Leader's question to one member.
const statusTimeout = time.Second

// process is a running member: an etcdtest-server -member child, and a
// client of its own client URL for Leader.
type process struct {
	cmd    *exec.Cmd
	stdin  io.Closer       // its end ends the child
	stderr *lsptest.Buffer // what the child said of a failure
	ready  chan bool       // whether its first line was "ready"
	exited chan struct{}
	cli    *clientv3.Client
}

// server is the etcdtest-server of this process (serverBinary).
var server struct {
	once sync.Once
	path string
	err  error
}

// serverBinary is the program of the members: ServerEnv's, else built once
// per process. It is built without the race detector: the members then
// answer at full speed on their own threads, where in the test process,
// under -race and -cpu 1, they shared one instrumented thread with the
// tests and answered later than agentd's bounds on a loaded machine.
func serverBinary() (string, error) {
	server.once.Do(func() {
		if p := os.Getenv(ServerEnv); p != "" {
			server.path = p
			return
		}
		server.path, server.err = buildServer()
	})
	return server.path, server.err
}

// buildServer builds etcdtest-server from the module of the working
// directory (a test's is its package's) into the user's cache, in a
// directory of that module's: each build replaces the program at once
// (a rename), so the processes of one go test run, which all build it, do
// not leave a copy each, and a member already running keeps its own.
func buildServer() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not in the agentd module: run from it, or set %s", ServerEnv)
	}
	root := filepath.Dir(mod)
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(cache, "agentd-etcdtest", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	tmp, err := os.CreateTemp(dir, "build-*"+exe)
	if err != nil {
		return "", err
	}
	tmp.Close()
	build := exec.Command("go", "build", "-o", tmp.Name(), "./tests/etcdtest/cmd/etcdtest-server")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("building etcdtest-server: %v\n%s", err, out)
	}
	path := filepath.Join(dir, "etcdtest-server"+exe)
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return path, nil
}

// args are the member's flags of etcdtest-server -member.
func (m *Member) args(state string) []string {
	var all []string
	for _, o := range m.c.Members {
		all = append(all, o.Name+"="+o.peerURL.String())
	}
	args := []string{"-member", "-name", m.Name, "-dir", m.dir,
		"-listen-client", m.listenURL.String(), "-advertise-client", m.clientURL.String(),
		"-listen-peer", m.peerURL.String(), "-initial-cluster", strings.Join(all, ","),
		"-state", state, "-quota", strconv.FormatInt(m.c.quota, 10)}
	if t := m.c.tls; t != nil {
		args = append(args, "-tls-ca", t.CAFile, "-tls-cert", t.ServerCert, "-tls-key", t.ServerKey)
	}
	return args
}

// spawn starts the member's process; waitReady waits for its "ready".
func (m *Member) spawn(state string) (*process, error) {
	bin, err := serverBinary()
	if err != nil {
		return nil, err
	}
	cli, err := m.statusClient()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, m.args(state)...)
	cmd.SysProcAttr = sysProcAttr()
	p := &process{cmd: cmd, stderr: &lsptest.Buffer{}, ready: make(chan bool, 1), exited: make(chan struct{}), cli: cli}
	cmd.Stderr = p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cli.Close()
		return nil, err
	}
	p.stdin = stdin
	// A pipe of our own for stdout: exec's would be closed by Wait, maybe
	// before the line is read.
	outR, outW, err := os.Pipe()
	if err != nil {
		cli.Close()
		return nil, err
	}
	cmd.Stdout = outW
	err = cmd.Start()
	outW.Close()
	if err != nil {
		outR.Close()
		cli.Close()
		return nil, err
	}
	go func() {
		defer outR.Close()
		sc := bufio.NewScanner(outR)
		p.ready <- sc.Scan() && sc.Text() == "ready"
		io.Copy(io.Discard, outR)
	}()
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// kill ends the process as a crash would and waits until it is gone.
func (p *process) kill() {
	p.cmd.Process.Kill()
	p.stdin.Close()
	<-p.exited
	p.cli.Close()
}

// statusClient is a client of the member's own client URL, which no Proxy
// sees. It does not dial until asked.
func (m *Member) statusClient() (*clientv3.Client, error) {
	cfg := clientv3.Config{Endpoints: []string{m.listenURL.String()}, Logger: zap.NewNop()}
	if t := m.c.tls; t != nil {
		cert, err := tls.LoadX509KeyPair(t.ClientCert, t.ClientKey)
		if err != nil {
			return nil, err
		}
		ca, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, errors.New("no certificate in " + t.CAFile)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}
	}
	return clientv3.New(cfg)
}

// status asks the member its own ID and the leader it follows (0: none).
func (p *process) status() (id, leader uint64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	resp, err := pb.NewMaintenanceClient(p.cli.ActiveConnection()).Status(ctx, &pb.StatusRequest{})
	if err != nil {
		return 0, 0, err
	}
	return resp.Header.MemberId, resp.Leader, nil
}
