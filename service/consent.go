package service

import (
	"os"
	"os/user"
	"strconv"
	"sync"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
)

// Consent to goal checks (docs/runtime.md §2.10.4): a check runs on this
// machine only when the person at this machine approved its exact command
// for the folder (workspace.Workspace.CheckApproved), and, in a team
// folder, only when the session's history records the check as it stands
// (a check some writer put into etcd without agentd is never approved).

// personOf is the person at this machine as agentd names a check's
// setter and approver: the OS user this process runs as, and the host
// name.
func personOf() goal.CheckSetter {
	p := goal.CheckSetter{User: os.Getenv("USER"), Host: "unknown host"}
	if u, err := user.Current(); err == nil && u.Username != "" {
		p.User = u.Username
	} else if p.User == "" {
		p.User = "uid " + strconv.Itoa(os.Getuid())
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		p.Host = h
	}
	return p
}

// Person is the person at this machine (personOf): who sets and approves
// checks through this agentd, from a shell or an editor.
func (s *Service) Person() goal.CheckSetter { return s.person }

// ApproveForPerson records that the person at this machine approved
// command for the folder of ws, as setting a check does (the command the
// person just gave).
func (s *Service) ApproveForPerson(ws *workspace.Workspace, command string) error {
	return ws.ApproveCheck(command, s.person, s.wall())
}

// ApproveCheck approves the current goal's check of session in ws for
// this machine (agentd.goal.approveCheck): command must be the check's
// exact text (goal.State.ApproveCheck); the approval is stored in this
// machine's state directory and the goal records a check change naming
// the approver.
func (s *Service) ApproveCheck(ws *workspace.Workspace, session, command string) (workspace.Session, error) {
	return s.UpdateGoal(ws, session, func(g *goal.State) ([]goal.Change, error) {
		cs, err := g.ApproveCheck(command, s.person, s.Now())
		if err != nil {
			return nil, err
		}
		return cs, s.ApproveForPerson(ws, command)
	})
}

// checkConsented says whether check c of session in ws may run on this
// machine: its command is approved here and, in a team folder, the
// history records it (recorded). outside says the history was read and
// does not record it: the check was set outside agentd. A history that
// cannot be read (etcd does not answer) consents to nothing but is not
// taken for outside.
func (s *Service) checkConsented(ws *workspace.Workspace, session string, c *goal.Check) (ok, outside bool) {
	found, err := s.recorded(ws, session, c)
	outside = err == nil && !found
	return found && ws.CheckApproved(c.Command), outside
}

// ShowConsent fills in what this machine says of the checks of session in
// ws (docs/runtime.md §2.10.4): the goal's check's approved and
// setOutsideAgentd in snap, and each queued item's checkApproved. They
// are never stored: each agentd answers for its own machine.
func (s *Service) ShowConsent(ws *workspace.Workspace, session string, snap *goal.Snapshot, queue []goal.QueuedGoal) {
	if snap != nil && snap.Check != nil {
		ok, outside := s.checkConsented(ws, session, snap.Check)
		snap.Check.Approved, snap.Check.SetOutsideAgentd = &ok, outside
	}
	for i := range queue {
		if queue[i].Check != "" {
			ok := ws.CheckApproved(queue[i].Check)
			queue[i].CheckApproved = &ok
		}
	}
}

// provenance caches what the histories of team folders say of checks: a
// check found recorded stays so; one not found is looked for again once
// the session's history has a newer event.
type provenance struct {
	mu   sync.Mutex
	seen map[provenanceKey]provenanceScan
}

type provenanceKey struct {
	root, session, command string
	by                     goal.CheckSetter
	byKnown                bool
}

type provenanceScan struct {
	found  bool
	newest uint64 // the newest event's seq when it was not found
}

// recorded says whether check c of session in ws was set through agentd:
// always in a folder of this machine (its state file is this user's, held
// under a lock); in a team folder, when an event of the session's history
// records a goal whose check has c's command and setter (docs/team.md,
// "Checks from etcd"). A check written into etcd otherwise is logged.
// Errors are those of reading the history.
func (s *Service) recorded(ws *workspace.Workspace, session string, c *goal.Check) (bool, error) {
	if !ws.Shared() {
		return true, nil
	}
	key := provenanceKey{root: ws.Root(), session: session, command: c.Command}
	if c.SetBy != nil {
		key.by, key.byKnown = *c.SetBy, true
	}
	s.prov.mu.Lock()
	prev, ok := s.prov.seen[key]
	s.prov.mu.Unlock()
	if ok && prev.found {
		return true, nil
	}
	newest, err := ws.History(session, 1, 0)
	if err != nil || len(newest.Events) == 0 {
		return false, err
	}
	if ok && prev.newest == newest.Events[0].Seq {
		return false, nil
	}
	found, err := s.scanHistory(ws, session, key)
	if err != nil {
		return false, err
	}
	if !found {
		s.log.Warn("a goal check in etcd has no history event that set it: it was written outside agentd, and runs on no machine whose person has not approved it", "workspace", ws.Root(), "session", session, "command", c.Command)
	}
	s.prov.mu.Lock()
	if len(s.prov.seen) >= maxProvenance {
		clear(s.prov.seen) // they are found again when asked
	}
	s.prov.seen[key] = provenanceScan{found: found, newest: newest.Events[0].Seq}
	s.prov.mu.Unlock()
	return found, nil
}

// maxProvenance bounds the checks the provenance cache remembers.
const maxProvenance = 4096

// scanHistory looks through the whole history of session, newest first,
// for a goal event that records the check key names.
func (s *Service) scanHistory(ws *workspace.Workspace, session string, key provenanceKey) (bool, error) {
	var before uint64
	for {
		page, err := ws.History(session, workspace.MaxHistory, before)
		if err != nil {
			return false, err
		}
		for _, ev := range page.Events {
			goals, err := ev.PayloadGoals() // an event of another scope has none
			if err != nil {
				continue
			}
			for _, g := range goals {
				if g == nil || g.Check == nil || g.Check.Command != key.command {
					continue
				}
				if set := g.Check.SetBy; (set != nil) == key.byKnown && (set == nil || *set == key.by) {
					return true, nil
				}
			}
		}
		if !page.More || len(page.Events) == 0 {
			return false, nil
		}
		before = page.Events[len(page.Events)-1].Seq
	}
}
