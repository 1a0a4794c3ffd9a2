import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  RevealOutputChannelOn,
  State as ClientState,
  type ClientCapabilities,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
  TransportKind,
} from 'vscode-languageclient/node';
import { bundledPath, chooseAgentd, chooseRemote, findExecutable } from './executable';
import { NOTIFICATIONS, type CommandResults, type ServerCommand } from './protocol.gen';
import type { Ui } from './ui';

/** The command that installs agentd, shown when the binary is missing. */
export const INSTALL_COMMAND = 'go install github.com/agentd/agentd/cmd/agentd@latest';

/** Settings of the `agentd` section that the client uses. */
export interface ClientSettings {
  /** Executable name (looked up on PATH) or path; `~/` is expanded. */
  path: string;
  /** `auto`: `agentd --remote=auto` (the shared daemon); `off`: a private `agentd` stdio server. */
  remote: 'auto' | 'off';
  /** Session the panel shows and edits by default, sent as `initializationOptions.session`. */
  session: string;
}

/** The agentd this package carries (bundledPath), when it carries one; set at activation. */
let bundledAgentd: string | undefined;

/**
 * Looks for the agentd that a platform package carries in extensionPath's
 * bin/, beside its agentd-hook; both are made executable, should the
 * unpacking of the .vsix have dropped the mode.
 */
export function findBundled(extensionPath: string): void {
  const p = bundledPath(extensionPath, process.platform);
  bundledAgentd = fs.existsSync(p) ? p : undefined;
  if (bundledAgentd && process.platform !== 'win32') {
    for (const prog of ['agentd', 'agentd-hook']) {
      try {
        fs.chmodSync(path.join(path.dirname(p), prog), 0o755);
      } catch {
        // not there, or not ours to change: findExecutable says so later
      }
    }
  }
}

/** Reads the client settings, with defaults: `agentd.path` unset is the bundled agentd, else `agentd`. */
export function readSettings(): ClientSettings {
  const cfg = vscode.workspace.getConfiguration('agentd');
  const r = cfg.inspect<string>('remote');
  const remote = chooseRemote(r?.workspaceFolderValue ?? r?.workspaceValue ?? r?.globalValue);
  const set = cfg.inspect<string>('path');
  return {
    path: chooseAgentd(set?.workspaceFolderValue ?? set?.workspaceValue ?? set?.globalValue, bundledAgentd),
    remote,
    session: (cfg.get<string>('session', 'default') || 'default').trim(),
  };
}

/** Lifecycle of the connection as the panel sees it. */
export type ConnectionStatus = 'stopped' | 'starting' | 'running' | 'missing' | 'failed';

/** A notification from agentd, as received. */
export interface AgentdNotification {
  method: string;
  params: unknown;
}

/**
 * Opts out of work-done progress: the panel's own status-bar item shows the
 * goal's progress, so agentd's progress reports would only duplicate it.
 */
class NoWorkDoneProgress implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    if (capabilities.window) {
      capabilities.window.workDoneProgress = false;
    }
  }
  getState(): { kind: 'static' } {
    return { kind: 'static' };
  }
  initialize(): void {}
  clear(): void {}
}

/**
 * Owns the language client that runs agentd for the first workspace folder.
 * It survives restarts: `onDidStart` fires each time a server is up (first
 * start, restart after a crash, explicit restart), and notification handlers
 * stay registered across them.
 */
export class AgentdClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private statusValue: ConnectionStatus = 'stopped';
  private missingShownFor: string | undefined;
  private restarts: number[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  private readonly startEmitter = new vscode.EventEmitter<void>();
  private readonly statusEmitter = new vscode.EventEmitter<ConnectionStatus>();
  private readonly notificationEmitter = new vscode.EventEmitter<AgentdNotification>();
  private lifecycle: Promise<void> = Promise.resolve();
  private clientSubscription: vscode.Disposable | undefined;

  /** Fires each time a server is running and initialized (start and every restart). */
  readonly onDidStart = this.startEmitter.event;
  /** Fires on every status change. */
  readonly onDidChangeStatus = this.statusEmitter.event;
  /** Fires for every `agentd/*` notification. */
  readonly onNotification = this.notificationEmitter.event;

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly ui: Ui,
  ) {
    this.disposables.push(this.startEmitter, this.statusEmitter, this.notificationEmitter);
  }

  /** Current connection status. */
  get status(): ConnectionStatus {
    return this.statusValue;
  }

  /** Settings the running client was started with. */
  settings: ClientSettings = { path: 'agentd', remote: 'auto', session: 'default' };

  private setStatus(s: ConnectionStatus): void {
    if (s !== this.statusValue) {
      this.statusValue = s;
      this.statusEmitter.fire(s);
    }
  }

  /** Starts agentd (no-op while running). Never throws: failures are shown to the user once. */
  start(): Promise<void> {
    this.lifecycle = this.lifecycle.then(() => this.doStart());
    return this.lifecycle;
  }

  /** Stops agentd. */
  stop(): Promise<void> {
    this.lifecycle = this.lifecycle.then(() => this.doStop());
    return this.lifecycle;
  }

  /** Stops, re-reads the settings and starts again; a missing binary is reported again. */
  restart(): Promise<void> {
    this.lifecycle = this.lifecycle.then(() => this.doRestart());
    return this.lifecycle;
  }

  /**
   * Restarts when `agentd.path` or `agentd.remote` now differ from the settings
   * of the last start. VS Code may report one settings change more than once;
   * the comparison runs in the lifecycle queue, after any start still pending,
   * so one change means one start.
   */
  reconfigure(): Promise<void> {
    this.lifecycle = this.lifecycle.then(() => {
      const next = readSettings();
      if (next.path === this.settings.path && next.remote === this.settings.remote) {
        return;
      }
      return this.doRestart();
    });
    return this.lifecycle;
  }

  private async doRestart(): Promise<void> {
    await this.doStop();
    this.missingShownFor = undefined;
    this.restarts = [];
    await this.doStart();
  }

  private async doStart(): Promise<void> {
    if (this.client) {
      return;
    }
    const settings = readSettings();
    this.settings = settings;
    const folder = vscode.workspace.workspaceFolders?.[0];
    const cwd = folder?.uri.scheme === 'file' ? folder.uri.fsPath : os.homedir();
    const exe = findExecutable(settings.path, process.env.PATH, cwd);
    if (!exe) {
      this.setStatus('missing');
      this.output.appendLine(`agentd executable not found: ${settings.path} (PATH=${process.env.PATH ?? ''})`);
      if (this.missingShownFor !== settings.path) {
        this.missingShownFor = settings.path;
        void this.showMissing(settings.path);
      }
      return;
    }
    const args = settings.remote === 'auto' ? ['--remote=auto'] : [];
    this.output.appendLine(`starting ${exe} ${args.join(' ')} (session ${settings.session})`);
    const serverOptions: ServerOptions = {
      command: exe,
      args,
      transport: TransportKind.stdio,
      options: { cwd, env: process.env },
    };
    // ran: the server reached Running. A server that closes before that failed to
    // start: it is reported once by the start below, never restarted here.
    const created: { client?: LanguageClient; ran?: boolean } = {};
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: { session: settings.session },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          if (!this.client || this.client !== created.client || !created.ran) {
            // Abandoned (stop, restart) or never started: never restart it.
            return { action: CloseAction.DoNotRestart, handled: true };
          }
          const now = Date.now();
          this.restarts = this.restarts.filter((t) => now - t < 180_000);
          this.restarts.push(now);
          if (this.restarts.length <= 4) {
            this.output.appendLine('agentd connection closed; restarting');
            return { action: CloseAction.Restart, handled: true };
          }
          this.setStatus('failed');
          void this.ui
            .error('agentd stopped 5 times in 3 minutes and is not restarted. See the output for details.', 'Show Output', 'Restart')
            .then((choice) => {
              if (choice === 'Show Output') {
                this.output.show();
              } else if (choice === 'Restart') {
                void this.restart();
              }
            });
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      initializationFailedHandler: (error) => {
        this.output.appendLine(`agentd initialize failed: ${String(error)}`);
        return false;
      },
    };
    const client = new LanguageClient('agentd', 'agentd', serverOptions, clientOptions);
    created.client = client;
    client.registerFeature(new NoWorkDoneProgress());
    for (const method of Object.values(NOTIFICATIONS)) {
      client.onNotification(method, (params: unknown) => this.notificationEmitter.fire({ method, params }));
    }
    this.clientSubscription = client.onDidChangeState((e) => {
      if (client !== this.client) {
        return;
      }
      if (e.newState === ClientState.Running) {
        created.ran = true;
        this.setStatus('running');
        this.startEmitter.fire();
      } else if (e.newState === ClientState.Starting) {
        this.setStatus('starting');
      } else if (this.statusValue !== 'failed') {
        this.setStatus('stopped');
      }
    });
    this.client = client;
    this.setStatus('starting');
    try {
      await client.start();
    } catch (err) {
      this.output.appendLine(`agentd failed to start: ${String(err)}`);
      this.client = undefined;
      this.clientSubscription?.dispose();
      this.clientSubscription = undefined;
      this.setStatus('failed');
      try {
        await client.dispose(2000);
      } catch {
        // already gone
      }
      const hint =
        settings.remote === 'auto'
          ? ' If this agentd is older and has no --remote=auto, update it or set "agentd.remote" to "off".'
          : '';
      void this.ui.error(`agentd (${exe}) failed to start: ${errorMessage(err)}.${hint}`, 'Show Output', 'Open Settings').then((c) => {
        if (c === 'Show Output') {
          this.output.show();
        } else if (c === 'Open Settings') {
          void vscode.commands.executeCommand('workbench.action.openSettings', '@ext:agentd.agentd-vscode');
        }
      });
    }
  }

  private async showMissing(configured: string): Promise<void> {
    const choice = await this.ui.error(
      `agentd was not found ("${configured}"). Install it with: ${INSTALL_COMMAND} — or set "agentd.path" to the binary.`,
      'Open Settings',
      'Copy Install Command',
    );
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'agentd.path');
    } else if (choice === 'Copy Install Command') {
      await vscode.env.clipboard.writeText(INSTALL_COMMAND);
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.clientSubscription?.dispose();
    this.clientSubscription = undefined;
    if (client) {
      try {
        await client.dispose(3000);
      } catch (err) {
        this.output.appendLine(`stopping agentd: ${String(err)}`);
      }
    }
    this.setStatus('stopped');
  }

  /** True when requests can be sent. */
  get isRunning(): boolean {
    return !!this.client && this.client.isRunning();
  }

  /**
   * Sends `workspace/executeCommand` with `arguments: [args]` and returns the
   * result. Rejects with the JSON-RPC error (its `data` holds `{code, ...}` for
   * domain refusals) or with an Error when agentd is not running. The result
   * type is the one the command declares (protocol.gen.ts `CommandResults`).
   */
  async execute<C extends ServerCommand>(command: C, args: object = {}): Promise<CommandResults[C]> {
    const client = this.client;
    if (!client || !client.isRunning()) {
      throw new Error('agentd is not running');
    }
    return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [args] })) as CommandResults[C];
  }

  dispose(): void {
    void this.doStop();
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

/** The message of an error or JSON-RPC error. */
export function errorMessage(err: unknown): string {
  if (err && typeof err === 'object' && 'message' in err) {
    return String((err as { message: unknown }).message);
  }
  return String(err);
}
