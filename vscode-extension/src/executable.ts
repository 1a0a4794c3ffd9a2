import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

// Finding the agentd binary. No `vscode` import: unit-tested in plain Node.

/**
 * Resolves the agentd executable: a name without a path separator is looked up
 * on `envPath` (like a shell), anything else is taken relative to `cwd`.
 * Returns the absolute path of an executable regular file, or undefined.
 */
export function findExecutable(command: string, envPath: string | undefined, cwd: string): string | undefined {
  let cmd = command;
  if (cmd === '~' || cmd.startsWith('~/')) {
    cmd = path.join(os.homedir(), cmd.slice(1));
  }
  const candidates: string[] = [];
  if (cmd.includes('/') || cmd.includes(path.sep)) {
    candidates.push(path.resolve(cwd, cmd));
  } else {
    for (const dir of (envPath ?? '').split(path.delimiter)) {
      if (dir) {
        candidates.push(path.join(dir, cmd));
      }
    }
  }
  for (const c of candidates) {
    try {
      const st = fs.statSync(c);
      if (st.isFile()) {
        fs.accessSync(c, fs.constants.X_OK);
        return c;
      }
    } catch {
      // not this one
    }
  }
  return undefined;
}

/**
 * The agentd a platform package of the extension carries (`vsce package
 * --target`, scripts/release.sh --vsix): bin/agentd in the extension's
 * folder, bin/agentd.exe on Windows.
 */
export function bundledPath(extensionPath: string, platform: string): string {
  return path.join(extensionPath, 'bin', platform === 'win32' ? 'agentd.exe' : 'agentd');
}

/**
 * The agentd to run: `agentd.path` when the user set it, else the bundled
 * one when this package carries it, else `agentd` on PATH.
 */
export function chooseAgentd(configured: string | undefined, bundled: string | undefined): string {
  return configured?.trim() || bundled || 'agentd';
}

/** The coding agents `agentd setup` wires (cmd/agentd/setup.go). */
export const SETUP_AGENTS = ['claude', 'codex', 'gemini', 'copilot', 'qwen', 'opencode', 'cursor'] as const;

/**
 * The arguments of `agentd setup` for agent: for all folders (`--user`,
 * whose entries name this agentd by its path, so no PATH is needed) or
 * for the folder (whose files name plain `agentd`, found on PATH).
 */
export function setupArgs(agent: string, user: boolean): string[] {
  return user ? ['setup', agent, '--user'] : ['setup', agent];
}

/**
 * `agentd.remote` as run: the user's setting, else `auto` (the shared
 * daemon, on every system: docs/platforms.md).
 */
export function chooseRemote(configured: string | undefined): 'auto' | 'off' {
  return configured === 'off' ? 'off' : 'auto';
}
