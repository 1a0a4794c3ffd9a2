// Package wsfolder is what agentd knows of a workspace folder without opening
// its store: its names (the file URI of the wire, FolderKey, the path of its
// state file), the workspace rule that picks the folder a process means
// when it is not told (FindFolder, docs/protocol.md §1.3), the session used
// when a caller names none, and the atomic write of the small JSON files
// kept beside the state.
//
// It is apart from package workspace, which links bbolt, fsnotify and the
// etcd client, so that the programs that only name a folder and reach the
// daemon (agentd-hook, run once per agent event, docs/hooks.md) link none of
// them: every package a program links costs each exec its initialisation
// and page faults (docs/performance.md). workspace builds on it. Standard
// library only.
package wsfolder
