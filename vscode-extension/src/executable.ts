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
