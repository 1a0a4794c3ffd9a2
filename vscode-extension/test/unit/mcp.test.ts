import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { mcpServerSpec } from '../../src/mcp';

describe('mcpServerSpec', () => {
  it('runs agentd mcp on the folder and session of the panel, through the shared daemon', () => {
    assert.deepEqual(mcpServerSpec({ remote: 'auto', session: 'default' }, '/usr/bin/agentd', '/home/me/my project'), {
      label: 'agentd',
      command: '/usr/bin/agentd',
      args: ['mcp', '--workspace', '/home/me/my project', '--session', 'default'],
      cwd: '/home/me/my project',
    });
  });

  it('follows remote: off', () => {
    assert.deepEqual(mcpServerSpec({ remote: 'off', session: 'review' }, 'agentd', '/w').args, ['mcp', '--workspace', '/w', '--session', 'review', '--remote=off']);
  });
});
