import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A git server over HTTP on a local port: git's own `git http-backend` (the
 * CGI program that serves the smart HTTP protocol) behind node's HTTP server.
 * Every request must carry `Authorization: <authorization>`; any other gets a
 * 401. It records the Authorization header of every request.
 */
export interface GitHttpServer {
  /** `http://127.0.0.1:<port>`; a repository `<root>/x.git` is at `<url>/x.git`. */
  url: string;
  authorizations: Array<string | null>;
  close(): Promise<void>;
}

export async function startGitHttpServer(root: string, authorization: string): Promise<GitHttpServer> {
  const authorizations: Array<string | null> = [];
  const server: Server = createServer((req, res) => {
    authorizations.push(req.headers.authorization ?? null);
    if (req.headers.authorization !== authorization) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="fork"' });
      res.end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : (value ?? '');
    };
    const child = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env['PATH'] ?? '',
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        HOME: root,
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: header('content-type'),
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: header('content-length') } : {}),
        HTTP_CONTENT_ENCODING: header('content-encoding'),
        GIT_PROTOCOL: header('git-protocol'),
        // Set, so http-backend lets a client push (http.receivepack defaults to on for an authenticated user).
        REMOTE_USER: 'fork-owner',
        REMOTE_ADDR: '127.0.0.1',
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let started = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (started) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      started = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    child.on('close', () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    authorizations,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
