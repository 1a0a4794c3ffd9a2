import * as os from 'os';
import * as vscode from 'vscode';
import { readSettings } from './client';
import { findExecutable, SETUP_AGENTS, setupArgs } from './executable';

/**
 * The palette's "agentd: Set up coding agents": runs `agentd setup AGENT`
 * with the agentd the panel runs (the bundled one unless `agentd.path` says
 * otherwise), in a terminal that shows what it wrote and what is left to do.
 */
export async function setupAgents(): Promise<void> {
  const settings = readSettings();
  const folder = vscode.workspace.workspaceFolders?.[0];
  const local = folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
  const exe = findExecutable(settings.path, process.env.PATH, local ?? os.homedir());
  if (!exe) {
    void vscode.window.showErrorMessage(
      `agentd was not found ("${settings.path}"): install the agentd extension package for your platform, or set "agentd.path" to the binary.`,
    );
    return;
  }
  const agent = await vscode.window.showQuickPick([...SETUP_AGENTS], { placeHolder: 'The coding agent to wire to agentd' });
  if (!agent) {
    return;
  }
  const scopes = [
    { label: 'All folders', description: `your ${agent} settings name ${exe}`, user: true },
    ...(local ? [{ label: 'This folder', description: "the project's files name agentd, found on PATH", user: false }] : []),
  ];
  const scope = await vscode.window.showQuickPick(scopes, { placeHolder: `Where ${agent} should use agentd` });
  if (!scope) {
    return;
  }
  const terminal = vscode.window.createTerminal({
    name: `agentd setup ${agent}`,
    shellPath: exe,
    shellArgs: setupArgs(agent, scope.user),
    cwd: local ?? os.homedir(),
  });
  terminal.show();
}
