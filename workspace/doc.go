// Package workspace is agentd's shell around the pure rules: a registry of
// open workspace folders (reference-counted across connections), one bbolt
// store per folder (schema version, sessions, revision, history), the
// task-file watcher (fsnotify), goal timers and change subscriptions.
//
// It imports todo, goal, bbolt and fsnotify; never go.lsp.dev, commands or
// lsp (ARCHITECTURE.md).
package workspace
