import type { ReportItem } from '../core/report-items.js';

/**
 * MLX's contribution policy, as checks on the files the user writes in pr/.
 * AGENTS.md forbids tools writing PR descriptions and commit messages, and
 * CONTRIBUTING.md asks for a disclosure of how AI was used. So the tool ships
 * only templates with placeholders and refuses to go on while one is left;
 * it never writes the prose itself.
 */

export const DESCRIPTION_FILE = 'pr/description.md';
/** The message of the pull request's one commit. */
export const COMMIT_MESSAGE_FILE = 'pr/commit-message.txt';

/** A place the user must write: `<!-- WRITE: ... -->` in Markdown, `TODO(user): ...` in plain text. */
const PLACEHOLDERS = [/<!--\s*WRITE:/, /TODO\(user\)/];

export interface PolicyFile {
  /** Path relative to the project, e.g. `pr/description.md`. */
  path: string;
  text: string;
}

export interface Placeholder {
  path: string;
  line: number;
  text: string;
}

export function findPlaceholders(files: readonly PolicyFile[]): Placeholder[] {
  const found: Placeholder[] = [];
  for (const file of files) {
    for (const [index, line] of file.text.split('\n').entries()) {
      if (PLACEHOLDERS.some((p) => p.test(line))) found.push({ path: file.path, line: index + 1, text: line.trim() });
    }
  }
  return found;
}

/** True when `text` holds words of the user's own, beyond placeholders, comments and MLX's template line. */
export function hasOwnWords(text: string): boolean {
  return ownWords(text).length > 0;
}

/** Text with HTML comments, placeholder lines and MLX's own PR template line removed. */
function ownWords(text: string): string {
  return text
    .replace(/<!--[\s\S]*?(-->|$)/g, '')
    .split('\n')
    .filter((l) => !/TODO\(user\)/.test(l))
    .filter((l) => !/I understand it is strictly prohibited to use AI/i.test(l))
    .map((l) => l.replace(/^\s*[-*]?\s*AI usage disclosure:\s*/i, ''))
    .join('\n')
    .trim();
}

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const DISCLOSURE_HEADING = /disclos|\bAI\b/i;

/**
 * The disclosure the description makes: the text under a heading that names
 * it (`## AI usage disclosure`), or after MLX's own template line
 * `- AI usage disclosure:`. Empty when there is none in the user's words.
 */
export function disclosureText(markdown: string): { heading: string | null; text: string } {
  const lines = markdown.replace(/<!--[\s\S]*?(-->|$)/g, (m) => m.replace(/[^\n]/g, ' ')).split('\n');
  for (const [i, line] of lines.entries()) {
    const heading = HEADING.exec(line);
    if (!heading || !DISCLOSURE_HEADING.test(heading[2] as string)) continue;
    const level = (heading[1] as string).length;
    const body: string[] = [];
    for (const next of lines.slice(i + 1)) {
      const h = HEADING.exec(next);
      if (h && (h[1] as string).length <= level) break;
      body.push(next);
    }
    const original = markdown
      .split('\n')
      .slice(i + 1, i + 1 + body.length)
      .join('\n');
    return { heading: (heading[2] as string).trim(), text: ownWords(original) };
  }
  const label = markdown.split('\n').findIndex((l) => /^\s*[-*]?\s*AI usage disclosure:/i.test(l));
  if (label >= 0) {
    const rest = markdown.split('\n').slice(label);
    const end = rest.findIndex((l, k) => k > 0 && (HEADING.test(l) || /^\s*[-*]\s/.test(l)));
    return { heading: null, text: ownWords(rest.slice(0, end < 0 ? undefined : end).join('\n')) };
  }
  return { heading: null, text: '' };
}

/**
 * The policy checks for `verify` (and for opening a PR): the description and
 * each commit message exist, hold no placeholder, and the description
 * discloses AI use in the user's own words.
 */
export function policyItems(files: readonly PolicyFile[]): ReportItem[] {
  const description = files.find((f) => f.path === DESCRIPTION_FILE);
  const messages = files.filter((f) => f.path !== DESCRIPTION_FILE);
  const placeholders = findPlaceholders(files);
  const where = placeholders.slice(0, 8).map((p) => `${p.path}:${p.line}`);
  const more = placeholders.length > where.length ? ` and ${placeholders.length - where.length} more` : '';
  const checks: ReportItem[] = [];

  // This check is about presence only. Its ok line names no file and no verdict on the text, so it
  // cannot read as "the description is fine" above the FAIL lines of the checks that read the text.
  const missing = [...(description ? [] : [DESCRIPTION_FILE]), ...(messages.length ? [] : [COMMIT_MESSAGE_FILE])];
  checks.push(
    missing.length
      ? {
          id: 'pr-files',
          title: 'PR text files present',
          status: 'fail',
          detail: `missing ${missing.join(', ')}`,
          fix: 'Restore the templates from the mlx-storage-pr package (pr/) and write them yourself.',
          required: true,
        }
      : {
          id: 'pr-files',
          title: 'PR text files present',
          status: 'pass',
          detail: `a description and ${messages.length} commit message${messages.length === 1 ? '' : 's'} in pr/`,
          required: true,
        },
  );

  const empty = files.filter((f) => ownWords(f.text).length === 0).map((f) => f.path);
  checks.push(
    placeholders.length > 0 || empty.length > 0
      ? {
          id: 'pr-placeholders',
          title: 'Text written by you',
          status: 'fail',
          detail: [
            placeholders.length ? `placeholders left at ${where.join(', ')}${more}` : '',
            empty.length ? `no text yet in ${empty.join(', ')}` : '',
          ]
            .filter(Boolean)
            .join('; '),
          fix: 'Replace every <!-- WRITE: ... --> and TODO(user) with your own words. MLX forbids tools writing PR descriptions and commit messages (AGENTS.md).',
          required: true,
        }
      : {
          id: 'pr-placeholders',
          title: 'Text written by you',
          status: 'pass',
          detail: 'no placeholders left',
          required: true,
        },
  );

  const disclosure = description ? disclosureText(description.text) : { heading: null, text: '' };
  checks.push(
    disclosure.text.length > 0
      ? {
          id: 'pr-ai-disclosure',
          title: 'AI use disclosure',
          status: 'pass',
          detail: `${DESCRIPTION_FILE} discloses AI use${disclosure.heading ? ` under "${disclosure.heading}"` : ''}`,
          required: true,
        }
      : {
          id: 'pr-ai-disclosure',
          title: 'AI use disclosure',
          status: 'fail',
          detail: description
            ? `${DESCRIPTION_FILE} has no AI use disclosure in your words (a heading such as "## AI usage disclosure" with text under it)`
            : `no ${DESCRIPTION_FILE}`,
          fix: 'Say how AI was used for this PR, in your own words (MLX CONTRIBUTING.md, "AI Usage Policy").',
          required: true,
        },
  );
  return checks;
}
