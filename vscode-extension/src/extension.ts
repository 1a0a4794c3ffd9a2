import * as vscode from 'vscode';
import { AgentdClient, findBundled, readSettings } from './client';
import { registerCommands } from './commands';
import { findExecutable } from './executable';
import { MCP_PROVIDER_ID, mcpServerSpec } from './mcp';
import { panelContext, type PanelContext } from './model';
import { GoalStatusBar } from './statusBar';
import { PanelStore } from './store';
import { TeamFileNotifier } from './teamNotice';
import { SwitchableUi } from './ui';
import { GoalViewProvider } from './views/goalView';
import { QueueViewProvider } from './views/queueView';
import { HistoryViewProvider } from './views/historyView';
import { TodoTreeProvider } from './views/todoTree';

let running: AgentdClient | undefined;

/** What `activate` returns: the parts, for the extension-host tests. */
export interface PanelApi {
  client: AgentdClient;
  store: PanelStore;
  ui: SwitchableUi;
  todos: TodoTreeProvider;
  goal: GoalViewProvider;
  queue: QueueViewProvider;
  history: HistoryViewProvider;
  statusBar: GoalStatusBar;
  /** Last values set for the `when`-clause context keys. */
  context: Record<string, unknown>;
  /** The MCP server definitions offered to VS Code's agent mode. */
  mcp: vscode.McpServerDefinitionProvider<vscode.McpStdioServerDefinition>;
}

/**
 * Offers `agentd mcp` on the first local workspace folder to VS Code's agent
 * mode (Copilot), so its model gets agentd's tools with no setup. None when
 * there is no local folder or no agentd executable; the list is offered
 * again when the folders or the agentd settings change.
 */
function mcpProvider(): vscode.McpServerDefinitionProvider<vscode.McpStdioServerDefinition> & vscode.Disposable {
  const changed = new vscode.EventEmitter<void>();
  const watch = [
    vscode.workspace.onDidChangeWorkspaceFolders(() => changed.fire()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('agentd')) {
        changed.fire();
      }
    }),
  ];
  return {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions: () => {
      const folder = vscode.workspace.workspaceFolders?.[0];
      if (folder?.uri.scheme !== 'file') {
        return [];
      }
      const settings = readSettings();
      const exe = findExecutable(settings.path, process.env.PATH, folder.uri.fsPath);
      if (!exe) {
        return [];
      }
      const spec = mcpServerSpec(settings, exe, folder.uri.fsPath);
      const def = new vscode.McpStdioServerDefinition(spec.label, spec.command, spec.args);
      def.cwd = vscode.Uri.file(spec.cwd);
      return [def];
    },
    dispose: () => {
      changed.dispose();
      watch.forEach((d) => d.dispose());
    },
  };
}

/** Wires the client, store, views, status bar and commands together. */
export function activate(context: vscode.ExtensionContext): PanelApi {
  findBundled(context.extensionPath);
  const output = vscode.window.createOutputChannel('agentd', { log: true });
  const ui = new SwitchableUi();
  const client = new AgentdClient(output, ui);
  running = client;
  const store = new PanelStore(client, readSettings().session);
  const todos = new TodoTreeProvider(store);
  const goal = new GoalViewProvider(store);
  const queue = new QueueViewProvider(store);
  const history = new HistoryViewProvider(client, store);
  const statusBar = new GoalStatusBar(store);
  const teamNotifier = new TeamFileNotifier(store, ui, context.workspaceState);
  const mcp = mcpProvider();
  const keys: Record<string, unknown> = {};
  const setKey = (key: string, value: unknown): void => {
    if (keys[key] !== value) {
      keys[key] = value;
      void vscode.commands.executeCommand('setContext', key, value);
    }
  };
  const syncContext = (): void => {
    const ctx: PanelContext = panelContext(store.state, store.sessions.length);
    for (const [k, v] of Object.entries(ctx)) {
      setKey(k, v);
    }
  };
  syncContext();
  setKey('agentdPanel.serverMissing', false);
  setKey('agentdPanel.connection', client.status);

  context.subscriptions.push(
    output,
    mcp,
    vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, mcp),
    client,
    store,
    todos,
    goal,
    queue,
    history,
    statusBar,
    teamNotifier,
    store.onDidChange(syncContext),
    client.onDidChangeStatus((s) => {
      setKey('agentdPanel.serverMissing', s === 'missing');
      setKey('agentdPanel.connection', s);
      syncContext();
    }),
    ...registerCommands({ client, store, ui, output, history }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('agentd.path') || e.affectsConfiguration('agentd.remote')) {
        void client.reconfigure();
      } else if (e.affectsConfiguration('agentd.session')) {
        store.setDefaultSession(readSettings().session);
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      if (client.status === 'stopped' && vscode.workspace.workspaceFolders?.length) {
        void client.start();
      }
    }),
  );

  if (vscode.workspace.workspaceFolders?.length) {
    void client.start();
  }
  return { client, store, ui, todos, goal, queue, history, statusBar, context: keys, mcp };
}

/** Stops agentd (shutdown and exit) before the window goes. */
export function deactivate(): Promise<void> | undefined {
  return running?.stop();
}
