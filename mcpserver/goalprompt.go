package mcpserver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// promptWords is how many words the goal prompt takes as positional
// arguments: Claude Code splits what follows `/mcp__agentd__goal` at
// white space and passes word i as the prompt's argument i, dropping the
// words past the last argument (docs/mcp.md, "The goal prompt"). The
// prompt therefore declares objective and the word slots w2 to
// w<promptWords> and joins them again; a filled last slot may have lost
// words after it, so it is refused rather than cut short.
const promptWords = 40

// criterionMark is the word "--", alone between spaces, that parts the
// objective from the completion criterion in the prompt's text:
// `/mcp__agentd__goal Ship the docs -- make docs passes`.
var criterionMark = regexp.MustCompile(`(^|\s)--(\s|$)`)

// goalPromptDef is the goal prompt: objective, its word slots, and the
// named criterion for hosts that pass named arguments (Gemini CLI's
// `--criterion="..."`).
func goalPromptDef() *mcp.Prompt {
	args := []*mcp.PromptArgument{{Name: "objective", Required: true,
		Description: "What the goal must achieve, then optionally -- and how to tell it is done: Ship the docs -- make docs passes."}}
	for i := 2; i <= promptWords; i++ {
		args = append(args, &mcp.PromptArgument{Name: wordSlot(i), Description: "More words of the objective (a host that splits the text at spaces passes one word each)."})
	}
	args = append(args, &mcp.PromptArgument{Name: "criterion", Description: "How to tell it is done (optional)."})
	return &mcp.Prompt{Name: "goal", Title: "Set a goal",
		Description: "Set a goal for the agent to pursue over many turns (created as the user, shown in the editor).",
		Arguments:   args}
}

// wordSlot is the name of the prompt's i-th word argument.
func wordSlot(i int) string { return fmt.Sprintf("w%d", i) }

// goalPromptArgs are the objective and criterion of a goal prompt's
// arguments: the objective and the word slots joined with spaces, cut at
// the first criterionMark when no criterion argument was named. Errors
// (-32602): no objective, or the last word slot filled.
func goalPromptArgs(args map[string]string) (objective, criterion string, err error) {
	if strings.TrimSpace(args[wordSlot(promptWords)]) != "" {
		return "", "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
			"the goal prompt takes at most %d words, and words past that may have been dropped: shorten the objective (point to a file for the details), or run `agentd goal create` from a shell", promptWords-1)}
	}
	parts := []string{strings.TrimSpace(args["objective"])}
	for i := 2; i < promptWords; i++ {
		if w := strings.TrimSpace(args[wordSlot(i)]); w != "" {
			parts = append(parts, w)
		}
	}
	objective = strings.TrimSpace(strings.Join(parts, " "))
	criterion = strings.TrimSpace(args["criterion"])
	if m := criterionMark.FindStringIndex(objective); criterion == "" && m != nil {
		objective, criterion = strings.TrimSpace(objective[:m[0]]), strings.TrimSpace(objective[m[1]:])
	}
	if objective == "" {
		return "", "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the goal prompt needs an objective: say what the goal must achieve"}
	}
	return objective, criterion, nil
}
