package goal

import (
	"fmt"

	"github.com/agentd/agentd/commands/protocol"
)

// Calls on an ended turn (docs/runtime.md §2.4.6): a call that carries a
// turn acts for that turn, so once the turn has ended it changes nothing.
// The call was made on a belief that no longer holds: a host that kept
// going after agentd ended its turn (its connection closed, the agentd
// process that began it ended, or, in a team folder, its daemon lost its
// lease and another daemon ended the turn while this one was paused or cut
// off).

// Why agentd ended a turn itself (Turn.EndedBy), as stored.
const (
	EndedDisconnect = "disconnect" // the connection that began it closed (§2.3)
	EndedRestart    = "restart"    // the agentd process that began it ended (§2.3.2)
	// EndedLeaseLost: in a team folder, the daemon that began it lost its
	// lease on the team's etcd (docs/team.md, "Fencing").
	EndedLeaseLost = "leaseLost"
)

// endedWhy words each EndedBy for the refusal of a later call.
var endedWhy = map[string]string{
	EndedDisconnect: "the connection that began it closed",
	EndedRestart:    "the agentd process that began it ended",
	EndedLeaseLost:  "the agentd daemon that began it lost its lease on the team's etcd (it ended, or was stopped or cut off for longer than the lease)",
}

// CheckTurn refuses a call that carries turnID when that turn has ended:
// an *Error with code turn.ended. A turn agentd ended itself is named with
// its reason (Turn.EndedBy). nil for "" (a call outside any turn), a live
// turn, or a turn agentd does not know (never begun, or no longer kept):
// those keep their own rules.
func (s *State) CheckTurn(turnID string) error {
	if turnID == "" {
		return nil
	}
	t := s.turn(turnID)
	if t == nil || !t.Ended {
		return nil
	}
	return turnEndedError(t)
}

// turnEndedError is the refusal of a call on the ended turn t.
func turnEndedError(t *Turn) *Error {
	why := "its host ended it"
	if t.EndedBy != "" {
		why = "agentd ended it"
		if w, ok := endedWhy[t.EndedBy]; ok { // a newer agentd's reason reads as no reason
			why += ": " + w
		}
	}
	return errorf(protocol.CodeTurnEnded, fmt.Sprintf("turn %q has ended (%s), so this call was not recorded; begin a new turn with a new turnId", t.ID, why))
}

// TurnEndedRefusal is the model's answer to a tool call that CheckTurn
// refuses; description is the tool's usual UI description.
func TurnEndedRefusal(description string) ToolResult {
	return ToolResult{
		Output: "Not run: the turn this call belongs to has ended, so nothing was changed. Stop here: call no more tools and end your reply. " +
			"The goal and the todo list may have changed since (another agent may be working on them): in your next turn, read them (GetGoal, and TodoList with no arguments) before you change them.",
		IsError:     true,
		ErrorCode:   protocol.CodeTurnEnded,
		Description: description,
	}
}

// refuseEndedByAgentd refuses a lifecycle call (a step begin or end, a
// turn end) on t when agentd ended t itself (Turn.EndedBy): the host's
// view of the turn is stale, and answering as for a retry would tell it
// that what it reports was counted. A turn its host ended keeps the retry
// rules of docs/runtime.md §2.4.2.
func refuseEndedByAgentd(t *Turn) error {
	if t.Ended && t.EndedBy != "" {
		return turnEndedError(t)
	}
	return nil
}
