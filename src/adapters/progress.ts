/**
 * Build progress from Ninja's `[n/N]` lines: a bar on a terminal, sparse
 * plain lines otherwise, each with the time left at the rate so far.
 */
export interface Progress {
  line(text: string): void;
  done(): void;
}

const NINJA = /^\[(\d+)\/(\d+)\]\s*(.*)$/;

export function createProgress(
  stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number },
  label: string,
  now: () => number = Date.now,
): Progress {
  const tty = stream.isTTY === true;
  let lastPlain = 0;
  let lastPercent = -1;
  let drawn = false;
  let first: { n: number; at: number } | null = null;
  return {
    line(text) {
      const m = NINJA.exec(text);
      if (!m) return;
      const n = Number(m[1]);
      const total = Number(m[2]);
      const percent = Math.floor((100 * n) / total);
      first ??= { n, at: now() };
      const left = timeLeft(first, { n, at: now() }, total);
      if (tty) {
        const width = 30;
        const filled = Math.round((width * n) / total);
        const what = (m[3] ?? '').replace(/^Building \S+ object /, '');
        const room = Math.max(10, (stream.columns ?? 100) - width - label.length - 20);
        stream.write(
          `\r\x1b[2K${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${n}/${total}${left} ${what.slice(-room)}`,
        );
        drawn = true;
      } else if (percent >= lastPercent + 10 || now() - lastPlain >= 30_000 || n === total) {
        stream.write(`${label}: ${n}/${total} (${percent}%)${left}\n`);
        lastPlain = now();
        lastPercent = percent;
      }
    },
    done() {
      if (drawn) stream.write('\r\x1b[2K');
    },
  };
}

/**
 * `, about 3 min left` at the rate since the first step seen, once at least
 * 5 steps and 5 s have passed; nothing before that or when the build is done.
 */
function timeLeft(first: { n: number; at: number }, current: { n: number; at: number }, total: number): string {
  const steps = current.n - first.n;
  const ms = current.at - first.at;
  if (steps < 5 || ms < 5_000 || current.n >= total) return '';
  const seconds = ((total - current.n) * ms) / steps / 1000;
  return seconds >= 90
    ? `, about ${Math.round(seconds / 60)} min left`
    : `, about ${Math.max(10, Math.round(seconds / 10) * 10)} s left`;
}
