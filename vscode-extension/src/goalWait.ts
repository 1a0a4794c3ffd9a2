/**
 * The pure part of Wait… (`agentd.goal.wait`, docs/runtime.md §2.13): reading
 * the time or duration typed, checking a workspace path and a note, and
 * building the command's args. No `vscode` import: unit-tested in plain Node.
 */
import { LIMITS, type GoalWaitArgs, type WaitConditions } from './protocol.gen';

/** How a wait treats the wall-clock budget (GoalWaitArgs.wallClock). */
export type WallClockMode = 'counts' | 'stops';

/**
 * The time or duration typed, read as the Neovim plugin's `:AgentdGoalWait`
 * reads its first word: digits and h/m/s units (`90s`, `30m`, `2h30m`) are
 * `for`; digits then a colon (`14:00`) are `until`. Undefined for anything else.
 */
export function parseWaitTime(text: string): Pick<WaitConditions, 'for' | 'until'> | undefined {
  const t = text.trim();
  if (/^[\d.]+[hms][\d.hms]*$/.test(t)) {
    return { for: t };
  }
  if (/^\d+:\d/.test(t)) {
    return { until: t };
  }
  return undefined;
}

/** One number and unit of a duration, as agentd reads it (Go's time.ParseDuration, units h, m, s, ms). */
const DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(ms|h|m|s)/y;

/** Milliseconds of a duration such as `2h30m`, or undefined when it is not one. */
function durationMs(text: string): number | undefined {
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  DURATION_PART.lastIndex = 0;
  let total = 0;
  while (DURATION_PART.lastIndex < text.length) {
    const m = DURATION_PART.exec(text);
    if (!m) {
      return undefined;
    }
    total += Number(m[1]) * unit[m[2]];
  }
  return total;
}

/**
 * The input box's check of a time or duration: undefined when agentd can
 * read it, else what is wrong. The daemon still refuses a time past its
 * limits (docs/runtime.md §2.13) with its own message.
 */
export function validateWaitTime(text: string): string | undefined {
  const t = text.trim();
  if (t === '') {
    return 'Type a duration (90s, 30m, 2h30m) or a time of day (14:00).';
  }
  const parsed = parseWaitTime(t);
  if (parsed?.for !== undefined) {
    const ms = durationMs(parsed.for);
    if (ms === undefined) {
      return `"${t}" is not a duration; write it as 90s, 30m or 2h30m.`;
    }
    return ms < 1000 ? `"${t}" is shorter than 1 second.` : undefined;
  }
  if (parsed?.until !== undefined) {
    const m = /^(\d{1,2}):(\d{2})$/.exec(t);
    if (!m) {
      return `"${t}" is not a time of day; write it as 14:00.`;
    }
    if (Number(m[1]) > 23 || Number(m[2]) > 59) {
      return `"${t}" is not a time of day: hours go to 23, minutes to 59.`;
    }
    return undefined;
  }
  return `"${t}" is neither a duration (90s, 30m, 2h30m) nor a time of day (14:00).`;
}

/**
 * The input box's check of a workspace-relative path: undefined when it is
 * one, else what is wrong. It need not exist yet; the daemon decides whether
 * it is inside the workspace (`goal.task_file_outside`, docs/runtime.md §4.1).
 */
export function validateWaitPath(text: string): string | undefined {
  const t = text.trim();
  if (t === '') {
    return 'Type a file or folder of the workspace, e.g. build/out.log.';
  }
  if (/^([/\\]|[A-Za-z]:)/.test(t)) {
    return `"${t}" is not relative to the workspace folder; write it as build/out.log.`;
  }
  if (t.split(/[/\\]/).includes('..')) {
    return `"${t}" goes up with ".."; the path must be inside the workspace.`;
  }
  return undefined;
}

/** The input box's check of the optional note. */
export function validateWaitNote(text: string): string | undefined {
  const n = [...text.trim()].length;
  return n > LIMITS.maxReasonChars ? `The note is ${n} characters long; at most ${LIMITS.maxReasonChars} are allowed.` : undefined;
}

/**
 * The ARGS of `agentd.goal.wait` for one wake condition, a note (blank
 * leaves it out) and the wall-clock mode. Paths use `/` whatever the platform.
 */
export function goalWaitArgs(condition: WaitConditions, note: string, wallClock: WallClockMode): GoalWaitArgs {
  const args: GoalWaitArgs = { ...condition };
  if (args.paths) {
    args.paths = args.paths.map((p) => p.trim().replace(/\\/g, '/'));
  }
  if (note.trim() !== '') {
    args.note = note.trim();
  }
  args.wallClock = wallClock;
  return args;
}
