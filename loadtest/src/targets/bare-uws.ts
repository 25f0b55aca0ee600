// The limit: a uWebSockets.js server that answers every request with a fixed 302 and does
// nothing else. No lookup, no click capture: what the redirector would reach with free work.
import uWS from 'uWebSockets.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 8081);
const LOCATION = 'https://example.com/';

const app = uWS.App().any('/*', (res) => {
  res.writeStatus('302 Found').writeHeader('Location', LOCATION).writeHeader('Cache-Control', 'private, no-store').end();
});

app.listen(host, port, (socket) => {
  if (!socket) {
    console.error(`bare-uws: cannot listen on ${host}:${port}`);
    process.exit(1);
  }
  console.log(`bare-uws listening on ${host}:${port}`);
});

process.once('SIGTERM', () => process.exit(0));
process.once('SIGINT', () => process.exit(0));
