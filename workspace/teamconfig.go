package workspace

// A team's configuration (docs/team.md, "Configuration"): the team file
// of a folder, this machine's etcd settings, and the client dialed with
// them.

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace/etcdstore"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// Team is the content of .agentd/team.json.
type Team struct {
	ID   string   `json:"id"`   // a UUID: the key prefix /agentd/<id>/
	Etcd []string `json:"etcd"` // client URLs, e.g. "http://10.0.0.5:2379"
}

// TeamOptions are a machine's settings for the team folders it opens
// (docs/team.md, "Configuration"): the cluster's endpoints, if they differ
// from team.json's, and how to authenticate.
type TeamOptions struct {
	Endpoints []string // replaces team.json's endpoints when not empty (AGENTD_ETCD_ENDPOINTS)
	CACert    string   // PEM file of the CA that signed the members' certificates; TLS when set
	Cert, Key string   // PEM files of a client certificate and its key
	User      string   // etcd user; Password goes with it
	Password  string
}

var teamIDPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// NewTeamID returns a random (version 4) UUID for a new team.
func NewTeamID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ReadTeam reads the team file of the folder at root; nil when it has none.
// A file that is not {"id": "<uuid>", "etcd": [URL, ...]} is refused with
// an *Error of code goal.CodeArgsInvalid naming the problem. Whether this
// machine uses it is another matter (teamaccept.go).
func ReadTeam(root string) (*Team, error) {
	tf, err := readTeamFile(root)
	if err != nil || tf == nil {
		return nil, err
	}
	if tf.problem != "" {
		return nil, teamFileError(filepath.Join(root, filepath.FromSlash(TeamFile)), tf.problem)
	}
	return tf.team, nil
}

// parseTeam decodes a team file's bytes; problem says why they cannot be used.
func parseTeam(data []byte) (t *Team, problem string) {
	t = new(Team)
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(t); err != nil {
		return nil, fmt.Sprintf("it is not a JSON object {\"id\", \"etcd\"}: %v", err)
	}
	if !teamIDPattern.MatchString(t.ID) {
		return nil, fmt.Sprintf("its \"id\" %q is not a lowercase UUID", t.ID)
	}
	if err := checkEndpoints(t.Etcd); err != nil {
		return nil, err.Error()
	}
	return t, ""
}

func teamFileError(path, problem string) error {
	return &Error{Code: goal.CodeArgsInvalid,
		Msg: fmt.Sprintf("the team file %s cannot be used: %s (docs/team.md)", path, problem)}
}

// checkEndpoints checks a list of etcd client URLs: at least one, each
// http:// or https:// with a host.
func checkEndpoints(eps []string) error {
	if len(eps) == 0 {
		return errors.New(`"etcd" lists no endpoint`)
	}
	for _, e := range eps {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("etcd endpoint %q is not an http:// or https:// URL with a host", e)
		}
	}
	return nil
}

// WriteTeam writes t as the team file of the folder at root (durably,
// through a rename), creating .agentd.
func WriteTeam(root string, t Team) error {
	path := filepath.Join(root, filepath.FromSlash(TeamFile))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return wsfolder.WriteJSONAtomic(path, t, true)
}

// dialTeam connects to the cluster of team t with the machine's options.
// It does not wait for the cluster: the first call does. t's endpoints are
// ones this machine's person chose: accepted with the team file
// (teamaccept.go) or given to team init; the machine's own endpoints
// replace them. Credentials never go over plain http (checkInClear).
func dialTeam(t *Team, o TeamOptions) (*clientv3.Client, []string, error) {
	cfg, eps, err := teamConfig(t, o)
	if err != nil {
		return nil, nil, err
	}
	cli, err := etcdstore.NewClient(cfg)
	return cli, eps, err
}

// teamConfig is the client configuration for the cluster of team t with
// the machine's options, and the endpoints it names.
func teamConfig(t *Team, o TeamOptions) (clientv3.Config, []string, error) {
	eps := t.Etcd
	if len(o.Endpoints) > 0 {
		if err := checkEndpoints(o.Endpoints); err != nil {
			return clientv3.Config{}, nil, &Error{Code: goal.CodeArgsInvalid, Msg: fmt.Sprintf("the etcd endpoints of this machine cannot be used: %v (docs/team.md)", err)}
		}
		eps = o.Endpoints
	}
	if err := checkInClear(eps, o); err != nil {
		return clientv3.Config{}, nil, err
	}
	cfg := clientv3.Config{
		Endpoints:   eps,
		DialTimeout: etcdstore.DialTimeout,
		Username:    o.User,
		Password:    o.Password,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithStatsHandler(etcdstore.SentStats{})},
	}
	if o.CACert != "" || o.Cert != "" || o.Key != "" {
		tc, err := teamTLS(o)
		if err != nil {
			return clientv3.Config{}, nil, &Error{Code: goal.CodeArgsInvalid, Msg: fmt.Sprintf("the etcd TLS settings cannot be used: %v (docs/team.md)", err)}
		}
		cfg.TLS = tc
	}
	return cfg, eps, nil
}

// checkInClear refuses an http:// endpoint when o holds credentials or
// TLS settings: the etcd client speaks plain HTTP/2 to an http:// URL,
// whatever TLS is configured, so a password would travel in clear and a CA
// would protect nothing (docs/team.md, "Credentials").
func checkInClear(eps []string, o TeamOptions) error {
	var held []string
	if o.User != "" || o.Password != "" {
		held = append(held, "an etcd user or password")
	}
	if o.Cert != "" || o.Key != "" {
		held = append(held, "a client certificate")
	}
	if o.CACert != "" {
		held = append(held, "a CA certificate")
	}
	if len(held) == 0 {
		return nil
	}
	for _, e := range eps {
		if u, err := url.Parse(e); err == nil && u.Scheme == "http" {
			return &Error{Code: goal.CodeArgsInvalid, Msg: fmt.Sprintf("etcd endpoint %s is plain http://, but this machine's etcd settings hold %s (--etcd-*, AGENTD_ETCD_*), which would travel unencrypted: nothing was sent; use https:// endpoints, or drop the credentials (docs/team.md, \"Credentials\")", e, strings.Join(held, " and "))}
		}
	}
	return nil
}

func teamTLS(o TeamOptions) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CACert != "" {
		pem, err := os.ReadFile(o.CACert)
		if err != nil {
			return nil, fmt.Errorf("reading the CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the CA file %s holds no PEM certificate", o.CACert)
		}
		tc.RootCAs = pool
	}
	if (o.Cert == "") != (o.Key == "") {
		return nil, errors.New("a client certificate needs both its certificate and its key file")
	}
	if o.Cert != "" {
		pair, err := tls.LoadX509KeyPair(o.Cert, o.Key)
		if err != nil {
			return nil, fmt.Errorf("loading the client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}
