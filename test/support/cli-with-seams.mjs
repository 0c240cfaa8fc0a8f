// The tool as bin/ runs it (Ctrl-C handling included), with the seams only tests inject through main(io):
// `node cli-with-seams.mjs '<seams as JSON>' <command> [args...]`, e.g. '{"pauseAt":"lock-taken"}'.
import { run } from '../../bin/run.js';

const [seams = '{}', ...argv] = process.argv.slice(2);
await run({ argv, seams: JSON.parse(seams) });
