module github.com/agentd/agentd

go 1.26.8
