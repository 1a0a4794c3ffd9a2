// This folder holds npm packages (node_modules/), some of which ship Go
// files. Being a module of its own leaves it out of the agentd module, so
// that `go list ./...` and `go test ./...` at the repository root reach only
// agentd's own packages (README.md, "Testing").
module github.com/agentd/agentd/tests/agents
