package commands

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/agentd/agentd/commands/protocol"
)

// TestFormatProgressVectors runs the progress vectors that the extension
// and the Neovim plugin share (goal/testdata/format.json).
func TestFormatProgressVectors(t *testing.T) {
	raw, err := os.ReadFile("../goal/testdata/format.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Progress []struct {
			Goal protocol.GoalSnapshot `json:"goal"`
			Want string                `json:"want"`
		} `json:"progress"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Progress) == 0 {
		t.Fatal("goal/testdata/format.json has no progress vectors")
	}
	for _, c := range v.Progress {
		if got := FormatProgress(&c.Goal); got != c.Want {
			t.Errorf("FormatProgress(%+v) = %q, want %q", c.Goal, got, c.Want)
		}
	}
}
