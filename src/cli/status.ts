import type { CommandSpec } from './spec.js';

export const statusSpec: CommandSpec = {
  name: 'status',
  describe: 'Show the pinned and actual commits, what is applied, what differs and uncommitted files',
  builder: (y) => y.example('$0 status --json', 'machine-readable state'),
  load: async () => (await import('../commands/status.js')).status,
};

export const resetSpec: CommandSpec = {
  name: 'reset',
  describe: 'Put the checkout back on the clean pinned commit (saves your changes first)',
  builder: (y) => y,
  load: async () => (await import('../commands/reset.js')).reset,
};
