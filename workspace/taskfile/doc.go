// Package taskfile is what agentd knows of goals' task files
// (docs/runtime.md §4; docs/task-files.md): the rules a task file path
// follows (Read, Find: inside the workspace folder, after ".." and
// symbolic links), how a task file is read (at most MaxBytes, its sha256
// and its checkboxes, CountCheckboxes), and the watcher that sees them
// change on disk (Watch).
//
// It imports goal, workspace and fsnotify; workspace does not import it:
// the watcher is fed by workspace's commit feed (workspace.Registry.Feed),
// never called from inside a change (docs/architecture.md).
//
// # The watcher
//
// One Watcher per Registry, so one per process (the daemon's; a one-shot
// command has none). It is started by the first task file that needs
// watching and stopped by Stop, before the registry closes. What it
// watches comes from the stored sessions, through the commit feed: when a
// folder opens, the task file of every current goal (after OnOpen's
// recovery), and after every commit, quiet ones included, its session's
// again, so the set follows creates, replaces and cancels; a newly
// referenced file is watched before that Update returns. A goal
// references its task file until it is complete
// (goal.State.ReferencedTaskFile); in a team folder, only the daemon whose
// agent drives the goal watches it (docs/team.md). Without
// Options.OnChange nothing is watched.
//
// It watches folders, never files: for each task file, the folder that
// holds it, or, while that folder does not exist yet, its nearest existing
// ancestor inside the workspace (the watch moves down as folders appear);
// for a path that goes through symbolic links, the folder of each link too,
// so a re-pointed link is seen. Folders are reference-counted across task
// files, sessions and workspaces: two task files in one folder take one
// watch, removed with the last reference.
//
// An event that concerns a task file (its path, a folder or link on the
// way to it, or the watched folder itself) (re)starts that file's settle
// timer; when no such event came for taskFileSettle (150 ms; events that
// never stop postpone it by at most maxSettle), the path is resolved again
// (moving the watches), the file is read and its sha256, size and
// existence compared with what every referencing goal recorded. Only a
// real difference calls Options.OnChange, outside any lock or
// transaction. A watcher error or an event overflow re-reads every watched
// task file.
//
// Events do not tell everything: inotify sees no file system mounted over
// a watched folder, a watch stays on its folder when an ancestor is renamed
// (the path then names another folder, or nothing), and some file systems
// send no events at all. So every taskFileVerify (2 s) each referenced task
// file is verified: its path is resolved again (an lstat per name, nothing
// read), a watched folder that the path no longer names (another device or
// inode) is watched again under its path, and the file is read and hashed
// only when where the path leads or the file's stat (device, inode, size,
// modification and change time) differs from the last check's, or that
// stat was too recent to tell a later write from (racyStamp). A folder that
// cannot be watched (inotify limits: ENOSPC, EMFILE...) is logged once at
// Warn; its task files then rely on the verification alone, which also
// tries to watch the folder again.
//
// When workspace.Registry.Open opens a folder, its task files are checked
// before Open returns (FeedOpened), so a change made while no process
// watched them is recorded before the first command on the folder reads
// its state.
package taskfile
