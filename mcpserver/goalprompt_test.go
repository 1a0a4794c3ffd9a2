package mcpserver

import (
	"fmt"
	"strings"
	"testing"
)

// TestGoalPromptArgs: the word slots join again, a lone -- parts the
// criterion (not a -- inside a word), a named criterion keeps the
// objective whole, an objective's own line breaks stay, and no objective
// or a filled last slot is refused.
func TestGoalPromptArgs(t *testing.T) {
	for _, tc := range []struct {
		args                      map[string]string
		objective, criterion, err string
	}{
		{map[string]string{"objective": "Ship", "w2": "the", "w3": "docs"}, "Ship the docs", "", ""},
		{map[string]string{"objective": "Ship", "w2": "docs", "w3": "--", "w4": "make", "w5": "docs"}, "Ship docs", "make docs", ""},
		{map[string]string{"objective": "Ship the docs -- make docs -- twice"}, "Ship the docs", "make docs -- twice", ""},
		{map[string]string{"objective": "Ship --fast"}, "Ship --fast", "", ""},
		{map[string]string{"objective": "Ship -- x", "criterion": "named"}, "Ship -- x", "named", ""},
		{map[string]string{"objective": "line one\nline two"}, "line one\nline two", "", ""},
		{map[string]string{"objective": "--", "w2": "only", "w3": "criterion"}, "", "", "needs an objective"},
		{map[string]string{"objective": " "}, "", "", "needs an objective"},
	} {
		o, c, err := goalPromptArgs(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: %q %q %v, want an error with %q", tc.args, o, c, err, tc.err)
			}
			continue
		}
		if err != nil || o != tc.objective || c != tc.criterion {
			t.Errorf("%v: %q %q %v, want %q %q", tc.args, o, c, err, tc.objective, tc.criterion)
		}
	}
	full := map[string]string{"objective": "w1"}
	for i := 2; i <= promptWords; i++ {
		full[wordSlot(i)] = fmt.Sprint("w", i)
	}
	if _, _, err := goalPromptArgs(full); err == nil || !strings.Contains(err.Error(), "at most 39 words") {
		t.Errorf("a filled last slot: %v, want the refusal", err)
	}
	delete(full, wordSlot(promptWords))
	if o, _, err := goalPromptArgs(full); err != nil || len(strings.Fields(o)) != promptWords-1 {
		t.Errorf("39 words: %q %v, want all of them", o, err)
	}
}
