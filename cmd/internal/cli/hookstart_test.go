package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestStartFailureWrittenWhole: two hooks that give up a start at once
// write the file of the start that hung while others read it; a reader
// finds the old content or the new one, never a file cut short
// (docs/hooks.md, "A daemon that does not start").
func TestStartFailureWrittenWhole(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "hooks", startFailedName)
	contents := make([][]byte, 2)
	for i := range contents {
		contents[i], _ = json.Marshal(startFailure{At: time.Now(), Program: filepath.Join("/opt", string(rune('a'+i)), "agentd")})
	}
	if err := writeStartFailure(marker, contents[0]); err != nil {
		t.Fatal(err)
	}
	const rounds = 2000
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for range rounds {
				if err := writeStartFailure(marker, contents[w]); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	bad := 0
	for range rounds {
		var f startFailure
		if !readStartFailure(marker, &f) {
			bad++
		}
	}
	wg.Wait()
	if bad > 0 {
		t.Errorf("%d of %d reads found no whole file", bad, rounds)
	}
	entries, _ := os.ReadDir(filepath.Dir(marker))
	if len(entries) != 1 {
		t.Errorf("%d files in %s, want the one (no temporary file left)", len(entries), filepath.Dir(marker))
	}
}
