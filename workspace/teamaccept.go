package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// A team file comes with a checkout: whoever can commit to the repository
// chose its etcd. It is used on a machine only once that machine's person
// accepted its exact content (docs/team.md, "Accepting a team file"): the
// acceptance, kept in the person's own state directory beside the folder's
// state,
//
//	<StateDir>/workspaces/<key>/team-accepted.json  {"sha256", "id", "endpoints", "acceptedAt"}
//
// holds the SHA-256 of the file's bytes and the endpoints it named. A file
// whose bytes differ in any way is not accepted: the folder is served from
// its bbolt file, as if it had no team file, and agentd.state says so
// (TeamFileNotice). Only accepted endpoints, or the ones configured on this
// machine (TeamOptions.Endpoints), are ever dialed, so the credentials of
// TeamOptions go only where this machine's person sent them.

// teamAcceptedFile is the acceptance's name in the folder's state directory.
const teamAcceptedFile = "team-accepted.json"

// TeamAcceptCommand is what a person runs to accept a folder's team file.
const TeamAcceptCommand = "agentd team accept"

// maxTeamFileBytes bounds the team file read: a real one is a few hundred
// bytes; a larger one is refused as unusable.
const maxTeamFileBytes = 64 << 10

// Statuses of a TeamFileNotice.
const (
	TeamFilePending = "pending" // not accepted on this machine (or changed since)
	TeamFileInvalid = "invalid" // not {"id", "etcd"}: it cannot be used, nor accepted
)

// TeamFileNotice is what agentd.state says of a team file that this
// machine does not use (docs/protocol.md §3, State.teamFile): absent when
// the folder has none, or it is accepted.
type TeamFileNotice struct {
	Status    string   `json:"status"`              // "pending" (TeamFilePending) or "invalid" (TeamFileInvalid)
	Path      string   `json:"path"`                // ".agentd/team.json" (TeamFile), relative to the folder
	ID        string   `json:"id,omitempty"`        // the team id it names
	Endpoints []string `json:"endpoints,omitempty"` // the etcd endpoints it names
	SHA256    string   `json:"sha256"`              // of the file's bytes: what agentd.team.accept takes
	Error     string   `json:"error,omitempty"`     // invalid: why it cannot be used
	Accept    string   `json:"accept,omitempty"`    // pending: "agentd team accept" (TeamAcceptCommand), the command that accepts it
}

// Line is the notice in one line for a person or the model, e.g. "Team file
// .agentd/team.json (etcd http://10.0.0.5:2379) is not accepted on this
// machine: agentd team accept".
func (n *TeamFileNotice) Line() string {
	if n.Status == TeamFileInvalid {
		return fmt.Sprintf("Team file %s is not used: %s; this machine's own state serves the folder", n.Path, n.Error)
	}
	return fmt.Sprintf("Team file %s (etcd %s) is not accepted on this machine: %s", n.Path, strings.Join(n.Endpoints, ","), n.Accept)
}

// teamAcceptance is the content of team-accepted.json.
type teamAcceptance struct {
	SHA256     string    `json:"sha256"`
	ID         string    `json:"id"`
	Endpoints  []string  `json:"endpoints"`
	AcceptedAt time.Time `json:"acceptedAt"`
}

// teamFile is a folder's team file as read now.
type teamFile struct {
	path    string
	sha     string // hex SHA-256 of its bytes
	team    *Team  // nil when problem is set
	problem string // why it cannot be used
}

// readTeamFile reads the team file of the folder at root; nil when it has
// none. Content that cannot be used is reported in teamFile.err; the error
// returned is for a file that cannot be read at all.
func readTeamFile(root string) (*teamFile, error) {
	path := filepath.Join(root, filepath.FromSlash(TeamFile))
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil && outsideFolder(root, path) {
		// A repository's link would have agentd read, and show, a file
		// outside the checkout (docs/team.md, "Accepting a team file").
		return &teamFile{path: path, problem: "it is a symbolic link, or lies in a linked folder, that leads out of the folder"}, nil
	}
	if err == nil && !fi.Mode().IsRegular() {
		// A FIFO or a device would block the read or never end it.
		return &teamFile{path: path, problem: "it is not a regular file"}, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspace %s: reading %s: %w", root, path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTeamFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("workspace %s: reading %s: %w", root, path, err)
	}
	sum := sha256.Sum256(data)
	tf := &teamFile{path: path, sha: hex.EncodeToString(sum[:])}
	if len(data) > maxTeamFileBytes {
		tf.problem = fmt.Sprintf("it is larger than %d bytes", maxTeamFileBytes)
		return tf, nil
	}
	tf.team, tf.problem = parseTeam(data)
	return tf, nil
}

// outsideFolder says whether path, in the folder at root, is a symbolic
// link or resolves through one to a place outside root.
func outsideFolder(root, path string) bool {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return true
	}
	realRoot, err1 := filepath.EvalSymlinks(root)
	realPath, err2 := filepath.EvalSymlinks(path)
	if err1 != nil || err2 != nil {
		return true
	}
	rel, err := filepath.Rel(realRoot, realPath)
	return err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func acceptancePath(stateDir, root string) string {
	return filepath.Join(stateDir, wsfolder.WorkspacesDir, wsfolder.FolderKey(root), teamAcceptedFile)
}

// acceptanceOf reads this machine's acceptance of the folder at root; nil when
// there is none or it cannot be read (nothing is accepted then).
func acceptanceOf(stateDir, root string) *teamAcceptance {
	data, err := os.ReadFile(acceptancePath(stateDir, root))
	if err != nil {
		return nil
	}
	var a teamAcceptance
	if json.Unmarshal(data, &a) != nil || a.SHA256 == "" {
		return nil
	}
	return &a
}

// teamOf decides what serves the folder at root on this machine: the team
// (with the endpoints accepted) when its team file is accepted as it is
// now; else a notice saying why not, when it has a team file; else
// neither (bbolt, no team file).
func teamOf(stateDir, root string) (*Team, *TeamFileNotice, error) {
	tf, err := readTeamFile(root)
	if err != nil || tf == nil {
		return nil, nil, err
	}
	if tf.problem != "" {
		return nil, &TeamFileNotice{Status: TeamFileInvalid, Path: TeamFile, SHA256: tf.sha, Error: tf.problem}, nil
	}
	if a := acceptanceOf(stateDir, root); a != nil && a.SHA256 == tf.sha && a.ID == tf.team.ID && slices.Equal(a.Endpoints, tf.team.Etcd) {
		return &Team{ID: a.ID, Etcd: a.Endpoints}, nil, nil
	}
	return nil, &TeamFileNotice{Status: TeamFilePending, Path: TeamFile, ID: tf.team.ID, Endpoints: tf.team.Etcd,
		SHA256: tf.sha, Accept: TeamAcceptCommand}, nil
}

// TeamFileStatus says what this machine, whose state directory is
// stateDir, does with the team file of the folder at root as it is now:
// accepted (the team serves the folder), or a notice (it has one that this
// machine does not use: agentd.state's teamFile), or neither (no team
// file). It reads two small files and opens nothing.
func TeamFileStatus(stateDir, root string) (accepted bool, notice *TeamFileNotice, err error) {
	t, n, err := teamOf(stateDir, root)
	return t != nil, n, err
}

// TeamFileNotice is TeamFileStatus's notice on this registry's machine.
func (r *Registry) TeamFileNotice(root string) (*TeamFileNotice, error) {
	_, n, err := teamOf(r.opts.StateDir, root)
	return n, err
}

// TeamAccepted is what AcceptTeam recorded.
type TeamAccepted struct {
	Team   Team   // as the file names it
	SHA256 string // of the file's bytes
	// Dialed are the endpoints this machine dials for the team, and sends
	// its etcd credentials to: its own (TeamOptions.Endpoints), else the
	// file's.
	Dialed []string
	// Reopened: the folder was open here, served from its bbolt file; its
	// clients move to the team store at their next command (Reopen).
	Reopened bool
}

// AcceptTeam records that this machine's person accepts the team file of
// the folder at root as it is now (agentd team accept): sha, when not "",
// must be the SHA-256 the person was shown, else the file changed since and
// nothing is recorded (args.invalid). A folder open in this registry and
// served from its bbolt file is reopened (Reopen), so that it is served
// from the team from its clients' next command on.
func (r *Registry) AcceptTeam(root, sha string) (TeamAccepted, error) {
	root = filepath.Clean(root)
	res, err := acceptTeamFile(r.opts.StateDir, root, sha, r.opts.Team)
	if err != nil {
		return TeamAccepted{}, err
	}
	r.mu.Lock()
	w := r.open[root]
	r.mu.Unlock()
	if w != nil {
		<-w.ready
		if w.openErr == nil && (w.team() == nil || w.team().ID() != res.Team.ID) {
			res.Reopened = r.Reopen(root)
		}
	}
	return res, nil
}

// acceptTeamFile writes the acceptance of the folder's team file as it is
// now (sha: see AcceptTeam), unless opening it with o would be refused
// (checkInClear): what would not be dialed is not accepted either.
func acceptTeamFile(stateDir, root, sha string, o TeamOptions) (TeamAccepted, error) {
	tf, err := readTeamFile(root)
	switch {
	case err != nil:
		return TeamAccepted{}, err
	case tf == nil:
		return TeamAccepted{}, &Error{Code: goal.CodeArgsInvalid, Msg: fmt.Sprintf("workspace %s has no %s: there is no team file to accept", root, TeamFile)}
	case tf.problem != "":
		return TeamAccepted{}, teamFileError(tf.path, tf.problem)
	case sha != "" && sha != tf.sha:
		return TeamAccepted{}, &Error{Code: goal.CodeArgsInvalid,
			Msg: fmt.Sprintf("%s of workspace %s changed since it was shown (sha256 %s, now %s): nothing was accepted; look at it again and accept what it says now", TeamFile, root, sha, tf.sha)}
	}
	eps := tf.team.Etcd
	if len(o.Endpoints) > 0 {
		eps = o.Endpoints
	}
	if err := checkInClear(eps, o); err != nil {
		return TeamAccepted{}, err
	}
	path := acceptancePath(stateDir, root)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return TeamAccepted{}, fmt.Errorf("workspace %s: creating the state directory: %w", root, err)
	}
	a := teamAcceptance{SHA256: tf.sha, ID: tf.team.ID, Endpoints: tf.team.Etcd, AcceptedAt: time.Now().UTC()}
	if err := wsfolder.WriteJSONAtomic(path, a, true); err != nil {
		return TeamAccepted{}, fmt.Errorf("workspace %s: recording the acceptance of %s: %w", root, TeamFile, err)
	}
	return TeamAccepted{Team: *tf.team, SHA256: tf.sha, Dialed: eps}, nil
}
