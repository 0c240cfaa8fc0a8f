import os from 'node:os';

import { defineConfig } from 'vitest/config';

// Most cases take a second, but many run git, CMake and the built CLI as processes: on a machine busy with
// something else (an MLX build beside the suite) a CMake fixture build or a loop of 20 interrupted runs takes
// minutes. The budgets are there to end a hang, not to time a case: 10 minutes for a case or a hook.
const BUDGET_MS = 600_000;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/cleanup.ts'],
    testTimeout: BUDGET_MS,
    hookTimeout: BUDGET_MS,
    // A worker that exits slowly under load (temp folders, child processes) is not a failure.
    teardownTimeout: 60_000,
    pool: 'forks',
    // Most of a case's time is spent waiting for git, CMake and the compilers, so two workers on two cores keep
    // them busy (vitest's default there is one): on 2 cores the suite ran in 649 s instead of 868 s.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
  },
});
