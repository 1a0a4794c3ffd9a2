package wsfolder

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// WriteJSONAtomic writes v as JSON to path through a temporary file and a
// rename, so a reader never sees a partial file: the small files kept
// beside the state (workspace.json, owner.json, .agentd/team.json, agentd
// hook's cursors). durable adds an fsync before the rename, for a file whose
// loss after a crash would lose something (team.json); owner.json, advisory
// and rewritten at every open, skips it (it cost ~4 ms per folder at
// initialize, docs/performance.md), and so does a hook's cursor (docs/hooks.md).
func WriteJSONAtomic(path string, v any, durable bool) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(data, '\n'), durable)
}

// WriteFileAtomic writes data to path whole: a new temporary file beside
// it (never one found at a known name, which could be a link to another
// file), renamed over it, so a reader sees the old content or the new one.
// durable adds an fsync before the rename.
func WriteFileAtomic(path string, data []byte, durable bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
