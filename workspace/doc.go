// Package workspace is agentd's shell around the pure rules: a registry of
// open workspace folders (reference-counted across connections), one bbolt
// store per folder (schema version, sessions, revision, history), change
// subscriptions and the commit feed (feed.go) that the task-file watcher
// (workspace/taskfile) follows.
//
// It imports todo, goal, bbolt, the etcd client (to dial a team's
// cluster) and its two stores; never fsnotify,
// go.lsp.dev, commands or lsp (docs/architecture.md).
//
// # State files (docs/protocol.md §1)
//
// Each folder has its own directory under the state directory, named by
// FolderKey (a hash of the folder's absolute, cleaned path):
//
//	<StateDir>/workspaces/<FolderKey>/state.db        bbolt; layout in workspace/boltstore
//	<StateDir>/workspaces/<FolderKey>/workspace.json  {"path", "createdAt"}
//	<StateDir>/workspaces/<FolderKey>/owner.json      {"pid", "startedAt"} of the lock holder
//	<StateDir>/workspaces/<FolderKey>/state.db.corrupt-<YYYYMMDDTHHMMSSZ>  a file moved aside
//	<StateDir>/workspaces/<FolderKey>/approved-checks.json  the check commands this machine's person approved (approvals.go)
//
// One process at a time holds a state file (bbolt's file lock); another
// waits at most Options.LockTimeout and gets a "workspace.locked" *Error
// naming the holder's pid. Opening first examines an existing file
// read-only: bad meta pages, a file shorter than its data, or a failed
// bbolt consistency check (files up to 32 MiB) move it aside and start a
// fresh one (Workspace.Recovered).
//
// The values in the file are this package's own record types (record.go),
// converted to and from Session, todo and goal values in one place, so the
// domain packages may rename their fields and JSON tags freely. The schema
// version counts the migrations applied (schema.go); a file or record of a
// newer agentd is refused. testdata/schema1-state.db is a file of the first
// release, which every later one must read.
//
// # Concurrency (docs/architecture.md, "State and concurrency")
//
// Each session has its own lock. An Update holds it while its callback
// runs, while the one bbolt transaction writes the session and its history
// event, and while subscribers are told, so notices of one session come in
// revision order; other sessions are not held up. bbolt commits one
// transaction at a time; the changes of other sessions that wait meanwhile
// share the next one, one fsync for all (group commit, workspace/boltstore).
// View reads an in-memory copy of the last commit and never waits for an
// Update. No file I/O other than bbolt's happens inside
// a transaction, and bytes read from bbolt are copied before it ends.
//
// # Team folders (docs/team.md)
//
// A folder with a .agentd/team.json is served from etcd instead
// (workspace/etcdstore, opened by team.go): the same records under
// /agentd/<team id>/, compare-and-set writes, a
// watch that relays the changes of other daemons to this process's
// subscribers, and a lease per daemon for the restart rule. The store
// behind a Workspace is one storage.Interface (workspace/storage): the
// state file's (workspace/boltstore) or the team's. That holds on a
// machine only once its person accepted the file's exact bytes
// (teamaccept.go: AcceptTeam, Reopen); until then the bbolt file serves the
// folder and TeamFileNotice says why.
package workspace
