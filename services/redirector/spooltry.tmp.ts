import { createClickSpool } from '/work/wt/redirector-spool/services/redirector/src/click-spool.ts';
import { packClickBatch } from '@deeplink/core';
import { readdirSync, statSync } from 'node:fs';
const dir = process.argv[2]!;
let errs = 0;
const spool = createClickSpool({ dir, maxBytes: 1e9, onWriteError: (e) => { errs++; if (errs < 3) console.log('err', (e as any).code); } });
let ok = 0;
for (let i = 0; i < 200; i++) {
  const b = packClickBatch({ batchId: 'b' + i, clicks: Array.from({ length: 20 }, (_, j) => ({ linkId: '0f8fad5b-d9cb-469f-a165-70867728950e', ts: Date.now(), ip: '127.0.0.1', userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36', referrer: '' })) });
  if (spool.append(b)) ok++;
}
const disk = readdirSync(dir).reduce((s, n) => s + statSync(dir + '/' + n).size, 0);
console.log({ ok, errs, bytes: spool.bytes(), disk, failing: spool.failing() });
