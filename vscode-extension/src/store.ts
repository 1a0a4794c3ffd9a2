import * as vscode from 'vscode';
import type { AgentdClient, AgentdNotification } from './client';
import { reconcile, takesState, GOAL_STATUS_VIEW, type NotificationBase } from './model';
import { NOTIFICATIONS, SERVER_COMMANDS, type SessionInfo, type State, type StoreChangedParams } from './protocol.gen';

/**
 * The state the views show: the last `State` of the selected session, when it
 * was received (for the live elapsed time), and the known sessions.
 *
 * It re-reads `agentd.state` on every (re)start of the server and on a
 * revision gap, and applies notifications and command results in between.
 */
export class PanelStore implements vscode.Disposable {
  /**
   * Last state of the selected session; undefined until agentd answered.
   * Every change of it fires `onDidChange` in the same tick.
   */
  state: State | undefined;
  /** Epoch milliseconds at which the goal snapshot of `state` was received. */
  receivedAt = 0;
  /** Sessions of the workspace (from `agentd.sessions`). */
  sessions: SessionInfo[] = [];
  /** Last error of `agentd.state`, shown in the views' welcome. */
  lastError: string | undefined;
  /**
   * The folder's team store does not answer (`State.stale`, then
   * `agentd/storeChanged`): the views say "stale" (docs/protocol.md §4.3).
   */
  stale = false;
  private sessionValue: string;
  private sessionPinned = false;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private sessionsTimer: ReturnType<typeof setTimeout> | undefined;
  private ticker: ReturnType<typeof setInterval> | undefined;
  private readonly emitter = new vscode.EventEmitter<void>();
  private readonly tickEmitter = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[] = [this.emitter, this.tickEmitter];

  /** Fires after `state`, `sessions` or the session changed. */
  readonly onDidChange = this.emitter.event;
  /** Fires every second while the shown goal is active (its elapsed time moves). */
  readonly onTick = this.tickEmitter.event;

  constructor(
    private readonly client: AgentdClient,
    defaultSession: string,
  ) {
    this.sessionValue = defaultSession;
    this.disposables.push(
      client.onDidStart(() => void this.refresh()),
      client.onNotification((n) => this.onNotification(n)),
      this.emitter.event(() => this.updateTicker()),
      client.onDidChangeStatus((s) => {
        if (s === 'missing' || s === 'failed' || s === 'stopped') {
          this.state = undefined;
          this.emitter.fire();
        }
      }),
    );
  }

  /** The session the views show and edit. */
  get session(): string {
    return this.sessionValue;
  }

  /**
   * Switches the views to `session` and re-reads its state. `pinned` (the
   * user picked it) stops the `agentd.session` setting from moving it again.
   */
  async setSession(session: string, pinned = true): Promise<void> {
    this.sessionPinned ||= pinned;
    if (session === this.sessionValue) {
      return;
    }
    this.sessionValue = session;
    this.state = undefined;
    this.emitter.fire();
    await this.refresh();
  }

  /** Follows the `agentd.session` setting unless the user picked a session. */
  setDefaultSession(session: string): void {
    if (!this.sessionPinned) {
      void this.setSession(session, false);
    }
  }

  /**
   * Common ARGS of every command: the selected session and, when the window has
   * more than one folder, the folder agentd runs for (the first).
   */
  baseArgs(): { session: string; workspace?: string } {
    const folders = vscode.workspace.workspaceFolders ?? [];
    return folders.length > 1 ? { session: this.sessionValue, workspace: folders[0].uri.toString() } : { session: this.sessionValue };
  }

  /**
   * Shows a state returned by a command (or by a conflict's data) if it is for
   * the selected session and, unless `anyRevision`, not older than the shown
   * one. `anyRevision`: the folder may have changed stores (a team file was
   * accepted), whose revisions are the new store's own.
   */
  setState(state: State | undefined, anyRevision = false): void {
    if (!state || typeof state !== 'object' || state.session !== this.sessionValue) {
      return;
    }
    if (!anyRevision && !takesState(this.state, this.sessionValue, state)) {
      return;
    }
    this.state = state;
    this.stale = state.stale === true;
    this.receivedAt = Date.now();
    this.lastError = undefined;
    this.emitter.fire();
  }

  /** Re-reads `agentd.state` and `agentd.sessions`; concurrent calls coalesce. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        await this.readOnce();
      } while (this.refreshAgain);
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async readOnce(): Promise<void> {
    if (!this.client.isRunning) {
      return;
    }
    const session = this.sessionValue;
    try {
      const state = await this.client.execute(SERVER_COMMANDS.state, this.baseArgs());
      if (session === this.sessionValue && state) {
        this.state = state;
        this.stale = state.stale === true;
        this.receivedAt = Date.now();
        this.lastError = undefined;
      }
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
    }
    // Tell the listeners (the context keys, the views) before the sessions
    // read: while it waits on agentd (on etcd, in a team folder) they would
    // otherwise lag behind a `state` anyone can already read.
    this.emitter.fire();
    await this.readSessions();
  }

  private async readSessions(): Promise<void> {
    try {
      const res = await this.client.execute(SERVER_COMMANDS.sessions, this.baseArgs());
      this.sessions = Array.isArray(res?.sessions) ? res.sessions : [];
    } catch {
      this.sessions = [];
    }
    this.emitter.fire();
  }

  private onNotification(n: AgentdNotification): void {
    const params = n.params as NotificationBase;
    if (!params || typeof params !== 'object') {
      return;
    }
    if (n.method === NOTIFICATIONS.storeChanged) {
      // Folder-wide, no session: back to fresh, re-read what changed meanwhile.
      this.stale = (n.params as StoreChangedParams).stale === true;
      this.emitter.fire();
      if (!this.stale) {
        void this.refresh();
      }
      return;
    }
    if (params.session !== this.sessionValue) {
      this.scheduleSessionsRead();
      return;
    }
    const r = reconcile(this.state, this.sessionValue, n.method, params);
    if (r.action === 'refresh') {
      void this.refresh();
    } else if (r.action === 'apply') {
      this.state = r.state;
      if (n.method === NOTIFICATIONS.goalChanged) {
        // wallClockMs of the new snapshot is as of now; todo and task-file
        // changes keep the old snapshot, so its receive time stays.
        this.receivedAt = Date.now();
      }
      this.emitter.fire();
      this.scheduleSessionsRead();
    }
  }

  /** Re-reads the session list a little later (notifications come in bursts). */
  private scheduleSessionsRead(): void {
    if (this.sessionsTimer) {
      return;
    }
    this.sessionsTimer = setTimeout(() => {
      this.sessionsTimer = undefined;
      void this.readSessions();
    }, 300);
  }

  private updateTicker(): void {
    const goal = this.state?.goal;
    const active = !!goal && GOAL_STATUS_VIEW[goal.status].clockRuns;
    if (active && !this.ticker) {
      this.ticker = setInterval(() => this.tickEmitter.fire(), 1000);
    } else if (!active && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  dispose(): void {
    if (this.ticker) {
      clearInterval(this.ticker);
    }
    if (this.sessionsTimer) {
      clearTimeout(this.sessionsTimer);
    }
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
