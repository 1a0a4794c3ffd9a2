// The agentd MCP server that the extension offers to VS Code's agent mode
// (Copilot): `agentd mcp` on the folder and session the panel shows, through
// the same shared daemon, so the agent's todo list and goal appear in the
// panel as it writes them (docs/mcp.md of the repository). No `vscode`
// import: unit-tested in plain Node; extension.ts registers the provider.
import type { ClientSettings } from './client';

/** The id of `contributes.mcpServerDefinitionProviders` in package.json. */
export const MCP_PROVIDER_ID = 'agentd.mcpServers';

/** What VS Code needs to start the server (a `McpStdioServerDefinition`). */
export interface McpServerSpec {
  label: string;
  command: string;
  args: string[];
  cwd: string;
}

/**
 * The `agentd mcp` command line for `folder` (a local path) with the
 * resolved executable `exe`: `--workspace` pins the panel's folder, the
 * panel's session is the agent's, and `remote: off` (a private server that
 * owns the state) is followed so that both use the same state the same way.
 */
export function mcpServerSpec(settings: Pick<ClientSettings, 'remote' | 'session'>, exe: string, folder: string): McpServerSpec {
  const args = ['mcp', '--workspace', folder, '--session', settings.session];
  if (settings.remote === 'off') {
    args.push('--remote=off');
  }
  return { label: 'agentd', command: exe, args, cwd: folder };
}
