import { afterAll } from 'vitest';

import { removeTempDirs } from './temp.js';

// Runs for every test file, after the file's own hooks, whether or not files share a worker.
afterAll(removeTempDirs);
