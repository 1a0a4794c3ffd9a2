#!/usr/bin/env bash
# tests/agents/ci.sh: real coding agents, offline, against the real agentd.
#
# Installs the pinned npm packages of package-lock.json (Claude Code 2.1.x with
# its native linux-x64 binary, which is called directly, Gemini CLI 0.61.x,
# Codex 0.169.x and GitHub Copilot CLI 1.0.x, whose native binaries are
# called directly too, Qwen Code 0.24.x and opencode 1.18.x, whose
# linux-x64 binary is called directly) into
# tests/agents/node_modules (gitignored), then runs the Go tests
# TestRealClaudeCode*, TestRealGeminiCLI*, TestRealCodex*,
# TestRealCopilotCLI*, TestRealQwenCode* and TestRealOpencode*
# (tests/agents_test.go: the MCP
# tools; tests/agents_hooks_test.go: the hooks, a 3-turn goal budget and its
# wrap-up note, the same budget with a model that answers "Done." every
# time (also in Codex: tests/agents_codex_test.go), the stale todo reminder
# at call 12, agentd unreachable; tests/agents_gemini_stream_test.go: a
# streamed Gemini answer runs no hook per chunk;
# tests/agents_check_test.go: a goal check that fails, then passes, and the
# goal queue's advance; a check that outlasts the agent's tool timeout; the
# model's `agentd goal set-check` through Claude Code's Bash tool and Gemini
# CLI's shell tool, refused; tests/agents_caps_test.go: a model that calls
# tools in parallel, ignores its list and answers "Done." past Claude
# Code's CLAUDE_CODE_STOP_HOOK_BLOCK_CAP and Gemini CLI's loop detection;
# tests/agents_copilot_test.go and tests/agents_qwen_test.go: the MCP tools,
# the 3-turn budget with "Done." every time, and a model that repeats its
# parallel tool calls; tests/agents_seen_test.go: the goal prompt's
# words in Claude Code, what each agent's model reads of agentd's texts
# and what the user sees when agentd continues or stops at a budget;
# tests/agents_opencode_test.go: opencode's MCP tools and agentd's
# plugin: the "Done." budget and a token budget crossed mid-turn;
# tests/agents_shellhook_test.go: hook events the model sends from Claude
# Code's Bash tool, refused, the goal's budget still binding;
# tests/agents_run_test.go, tests/agents_runwait_test.go and
# tests/agents_rundaemon_test.go: `agentd run` driving the agents, its
# daemon killed twice in one run):
# each runs `agentd setup` (whose hooks run agentd-hook, which the tests
# build beside agentd), then
# the agent's whole loop on scripted model output (a small Messages API on
# 127.0.0.1 for Claude Code, a Responses API for Codex, Chat Completions for
# Copilot CLI, Qwen Code and
# opencode, --fake-responses for Gemini CLI), with HOME, state
# and runtime folders private to the test.
# Prints "N passed, N failed" as its last line; exits non-zero on any failure.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$HERE"
# npm install, not npm ci: Qwen Code's optional @teddyzhu/clipboard names
# platform packages the registry here does not serve, so the lock cannot
# hold them and npm ci refuses it; npm install takes the locked versions
# and skips the optional packages it cannot get (--no-save: the lock stays).
if ! npm install --no-save --no-audit --no-fund --loglevel=error; then
  echo "0 passed, 1 failed"
  exit 1
fi
cd "$ROOT"
# -timeout is a hang guard (each agent run has its own, agentLimit): at a
# load of 20 to 25 on 2 cores the 54 tests took 29 min 44 s (opencode's
# three 3 min each, Qwen Code's four 1 to 2 min); at 30 to 35, 29 of them
# took 38 min.
out=$(AGENTD_AGENTS="$HERE" go test -count=1 -timeout 120m ./tests -run '^TestReal(ClaudeCode|GeminiCLI|Codex|CopilotCLI|QwenCode|Opencode)' -v 2>&1)
code=$?
printf '%s\n' "$out"
passed=$(grep -c '^--- PASS: TestReal' <<<"$out")
failed=$(grep -c '^--- FAIL: TestReal' <<<"$out")
if [ "$code" != 0 ] && [ "$failed" = 0 ]; then failed=1; fi
echo "$passed passed, $failed failed"
[ "$code" = 0 ] && [ "$passed" = 55 ]
