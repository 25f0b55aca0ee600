import http from 'node:http';

/** A keep-alive HTTP client for single redirects: never follows them, reports the status. */
export interface Visitor {
  /** GETs `path` with the User-Agent and resolves with the status once the answer is fully read. */
  visit(path: string, userAgent: string): Promise<number>;
  close(): void;
}

/** A client for `baseUrl` with at most `sockets` connections. */
export function createVisitor(baseUrl: string, sockets = 16): Visitor {
  const { hostname, port } = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  return {
    visit(path, userAgent) {
      return new Promise((resolve, reject) => {
        const request = http.get({ agent, hostname, port, path, headers: { 'user-agent': userAgent } }, (response) => {
          response.resume();
          response.once('end', () => resolve(response.statusCode ?? 0));
          response.once('error', reject);
        });
        request.once('error', reject);
      });
    },
    close: () => agent.destroy(),
  };
}
