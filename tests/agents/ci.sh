#!/usr/bin/env bash
# tests/agents/ci.sh: real coding agents, offline, against the real agentd.
#
# Installs the pinned npm packages of package-lock.json (Claude Code 2.1.x with
# its native linux-x64 binary, which is called directly, Gemini CLI 0.61.x,
# and Codex 0.169.x, whose native binary is called directly too) into
# tests/agents/node_modules (gitignored), then runs the Go tests
# TestRealClaudeCode*, TestRealGeminiCLI* and TestRealCodex*
# (tests/agents_test.go: the MCP
# tools; tests/agents_hooks_test.go: the hooks, a 3-turn goal budget and its
# wrap-up note, the same budget with a model that answers "Done." every
# time (also in Codex: tests/agents_codex_test.go), the stale todo reminder
# at call 12, agentd unreachable; tests/agents_gemini_stream_test.go: a
# streamed Gemini answer runs no hook per chunk;
# tests/agents_check_test.go: a goal check that fails, then passes, and the
# goal queue's advance; a check that outlasts the agent's tool timeout; the
# model's `agentd goal set-check` through Claude Code's Bash tool and Gemini
# CLI's shell tool, refused):
# each runs `agentd setup` (whose hooks run agentd-hook, which the tests
# build beside agentd), then
# the agent's whole loop on scripted model output (a small Messages API on
# 127.0.0.1 for Claude Code, a Responses API for Codex, --fake-responses for
# Gemini CLI), with HOME, state
# and runtime folders private to the test.
# Prints "N passed, N failed" as its last line; exits non-zero on any failure.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$HERE"
if ! npm ci --no-audit --no-fund --loglevel=error; then
  echo "0 passed, 1 failed"
  exit 1
fi
cd "$ROOT"
out=$(AGENTD_AGENTS="$HERE" go test -count=1 -timeout 30m ./tests -run '^TestReal(ClaudeCode|GeminiCLI|Codex)' -v 2>&1)
code=$?
printf '%s\n' "$out"
passed=$(grep -c '^--- PASS: TestReal' <<<"$out")
failed=$(grep -c '^--- FAIL: TestReal' <<<"$out")
if [ "$code" != 0 ] && [ "$failed" = 0 ]; then failed=1; fi
echo "$passed passed, $failed failed"
[ "$code" = 0 ] && [ "$passed" = 18 ]
