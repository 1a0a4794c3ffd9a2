package workspace

// Workspace is one open workspace folder.
// PLACEHOLDER: the workspace package's owner replaces this file.
type Workspace struct{}
