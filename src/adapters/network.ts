import net from 'node:net';

/**
 * Whether a TCP connection to `host:port` opens within `timeoutMs` (name
 * lookup included). Never throws; the reason says why not.
 */
export function canConnect(
  host: string,
  port: number,
  timeoutMs: number,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (result: { ok: true } | { ok: false; reason: string }) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () => done({ ok: false, reason: `no answer within ${Math.round(timeoutMs / 1000)} s` }),
      timeoutMs,
    );
    socket.once('connect', () => done({ ok: true }));
    socket.once('error', (error: NodeJS.ErrnoException) => done({ ok: false, reason: error.code ?? error.message }));
  });
}
