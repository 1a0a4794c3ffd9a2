package goal

import (
	"fmt"
	"strings"
)

// What a person set, the model cannot undo (docs/runtime.md §2.11). A
// goal's check is always a person's (no model tool sets one), and so is
// each limit of PersonLimits. The model's CreateGoal may not replace an
// unfinished goal that has either, and its SetGoalBudget may lower a
// person's limit but never raise it; it has no tool that removes a limit,
// pauses or cancels. These are the rules; the refusals carry
// CodePersonSet.

// askTheUser ends every person_set refusal: what the user can do, so that
// the model asks them rather than looking for another way.
const askTheUser = "in their own terminal (agentd goal ...) or in the goal panel"

// personSet names what a person set on g that the model may not drop: "a
// check", "a budget", "a wait" (the goal waits as the user asked,
// docs/runtime.md §2.13), joined with "and", or "" for nothing.
func (g *Goal) personSet() string {
	var parts []string
	if g.Check != nil {
		parts = append(parts, "a check")
	}
	if g.PersonLimits.any() {
		parts = append(parts, "a budget")
	}
	if g.Status == Waiting && g.waitBy() == User {
		parts = append(parts, "a wait")
	}
	return strings.Join(parts, " and ")
}

// modelMayReplace refuses, with goal.person_set, the model's replace of
// the current goal when it is unfinished and has a check or a budget a
// person set.
func (s *State) modelMayReplace() error {
	g := s.Goal
	if g == nil || g.Status == Complete {
		return nil
	}
	if what := g.personSet(); what != "" {
		return errorf(CodePersonSet, fmt.Sprintf("the goal has %s the user set; only the user can replace or cancel it", what))
	}
	return nil
}

// replaceRefusal is the model's answer to a CreateGoal that would drop
// what a person set on the current goal: with replace (goal.person_set)
// or without it (goal.already_exists, whose usual answer invites a
// replace).
func (g *Goal) replaceRefusal(replace bool) string {
	lead := "Not created: the current goal is %s: %q. It has %s the user set, so you cannot replace it; only the user can."
	if !replace {
		lead = "Not created: there is already a goal, and it is %s: %q. It has %s the user set, so only the user can replace it."
	}
	return fmt.Sprintf(lead+" Keep working toward it. If the user wants a different goal, ask them to cancel or replace the current one themselves, %s.", g.Status, oneLine(g.Objective, 200), g.personSet(), askTheUser)
}

// limitRefusal is the model's answer, goal.person_set, to a SetGoalBudget
// of kind whose limit is above the one a person set for that budget; ""
// when the model may set it. A limit the model sets where the person set
// none is the model's: it may change it again either way.
func (g *Goal) limitRefusal(kind BudgetKind, limit int64) string {
	person := g.PersonLimits.get(kind)
	if person == nil || limit <= *person {
		return ""
	}
	return fmt.Sprintf("Budget not set: the user set a %s; only the user can raise it. You may set a lower limit. If the user wants a larger budget, ask them to raise it themselves, %s.", budgetName(kind, *person), askTheUser)
}

// setPersonLimits records the fields u names as the person's: the limit
// each has in limits, or none.
func (g *Goal) setPersonLimits(u BudgetUpdate, limits Limits) {
	for kind, f := range map[BudgetKind]LimitUpdate{TurnBudget: u.Turns, TokenBudget: u.Tokens, WallClockBudget: u.WallClockMs} {
		if f.Set {
			g.PersonLimits.set(kind, clonePtr(limits.get(kind)))
		}
	}
}

// restorePersonLimits records, after an undo set g's limits from old to
// the ones it has now, each limit the undo changed as the person's: the
// person chose it by undoing.
func (g *Goal) restorePersonLimits(old Limits) {
	for _, kind := range []BudgetKind{TurnBudget, TokenBudget, WallClockBudget} {
		if now := g.Limits.get(kind); !sameLimit(old.get(kind), now) {
			g.PersonLimits.set(kind, clonePtr(now))
		}
	}
}
