// Command agentd is the workspace daemon that keeps AI agents' todo lists and
// goals (see README.md). main only does the OS setup (signals, cli.Main) and
// hands the process to run.
package main

import "github.com/agentd/agentd/cmd/internal/cli"

func main() { cli.Main(run) }
