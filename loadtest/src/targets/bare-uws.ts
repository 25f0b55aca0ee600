// The limit: a uWebSockets.js server that answers every request with a fixed 302 and does
// nothing else. No lookup, no click capture: what the redirector would reach with free work.
// With READ_CLIENT_ADDRESS=1 it also reads the peer address, as any server that records its
// visitors must: the limit for a redirector that counts unique visitors.
import { uws } from '../../../services/redirector/src/uws.js';

/** The same build the redirector picks, so the limit is measured on what the redirector runs. */
const uWS = uws.module;

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 8081);
const readAddress = process.env.READ_CLIENT_ADDRESS === '1';
const LOCATION = 'https://example.com/';
/** Summed so the read has a use and cannot be optimised away. */
let _addressBytes = 0;

const app = uWS.App().any('/*', (res) => {
  if (readAddress) _addressBytes += res.getRemoteAddress().byteLength;
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
