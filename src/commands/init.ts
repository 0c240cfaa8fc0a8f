import { UserError } from '../core/errors.js';
import { verifyRevisionOption } from '../core/git-values.js';
import { initProject, type InitData } from '../upkeep/init.js';
import { defineCommand, type CommandResult, type GlobalOptions } from './spec.js';

interface InitOptions extends GlobalOptions {
  from?: string | undefined;
  pin?: string | undefined;
}

export const initCommand = defineCommand({
  name: 'init',
  describe: 'Make a new project folder (--project) from the commits of an MLX branch (--from) on the pin',
  builder: (y) =>
    y
      .option('from', {
        type: 'string',
        describe: 'The MLX branch, tag or commit whose commits from the pin become the series',
      })
      .option('pin', {
        type: 'string',
        describe: "The MLX commit the series starts from (default: the pin of the current folder's project)",
      })
      .example('$0 init --project ../my-fix --from my-fix --mlx-repo ~/src/mlx', 'a branch of a local MLX clone')
      .epilog(
        '--project names the new folder (absent or empty); --workdir is not used. ' +
          'The new folder holds the config (the pin, its version, the branch), one patch per changed file in the order the commits first ' +
          'change the files, patches/series, the pr/ placeholders and an empty mutants.json; no templates and no variables (add them ' +
          "when you want them). init checks that the series applied to the pin gives the branch's tree exactly, and writes nothing " +
          'unless it does. It refuses a folder that is not empty, a branch that does not descend from the pin, and merges, binary ' +
          'files, symbolic links and submodules in the range.',
      ),
  run: (o) => init(o),
});

async function init(options: InitOptions): Promise<CommandResult<InitData>> {
  const from = options.from?.trim();
  const target = options.project?.trim();
  if (!from || !target)
    throw new UserError(
      'USAGE',
      `init needs ${!target ? '--project <new folder>' : ''}${!target && !from ? ' and ' : ''}${!from ? '--from <ref>' : ''}.`,
      {
        hint: 'For example `mlx-storage-pr init --project ../my-fix --from my-fix --mlx-repo ~/src/mlx`.',
      },
    );
  verifyRevisionOption('--from', from);
  if (options.pin !== undefined) verifyRevisionOption('--pin', options.pin.trim());
  const data = await initProject({
    cwd: options.cwd,
    env: options.env,
    target,
    from,
    pin: options.pin?.trim() || undefined,
    mlxRepo: options.mlxRepo,
    verbose: options.verbose,
    logger: options.logger,
  });
  const lines = data.patches.map(
    (p) => `patches/${p.name}: ${p.renamedFrom === undefined ? '' : `${p.renamedFrom} -> `}${p.file}`,
  );
  lines.push(
    `Made ${data.project} from ${data.commits} commit(s) of ${options.from} (${data.head.slice(0, 12)}) on ${data.pin.slice(0, 12)} (MLX ${data.version}): ${data.patches.length} patch(es), branch ${data.branch}.`,
  );
  if (data.patches.length === 0) lines.push(`The series is empty: ${options.from} is the pin.`);
  lines.push(
    `Next: write pr/commit-message.txt and pr/description.md, then \`mlx-storage-pr apply --project ${data.project}\`.`,
  );
  return { data, lines };
}
