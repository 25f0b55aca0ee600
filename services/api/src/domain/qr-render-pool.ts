import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { rateLimited } from '@deeplink/core';
import type { QRCodeToBufferOptions } from 'qrcode';
import { logoBox } from './qr-code.js';

// The API ships as one bundled file, so the thread's code is evaluated from this string rather than
// loaded from a file of its own. It loads qrcode and pngjs from the paths this module resolves, the
// same copies. A logo is drawn over the code's centre in the box logoBox (qr-code.ts) describes:
// the background colour over the whole box, the logo fitted inside it with a module of margin,
// its transparent parts showing the background.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const QRCode = require(workerData.qrcode);
const { PNG } = require(workerData.pngjs);
const logoBox = ${logoBox.toString()};
function drawLogo(text, options, png, logoPng) {
  const code = PNG.sync.read(png);
  const logo = PNG.sync.read(Buffer.from(logoPng));
  const modules = QRCode.create(text, options).modules.size;
  const scale = code.width / (modules + 2 * options.margin);
  const box = logoBox(modules);
  const from = Math.round((options.margin + box.from) * scale);
  const to = Math.round((options.margin + box.from + box.size) * scale);
  const bg = [1, 3, 5].map((at) => parseInt(options.color.light.slice(at, at + 2), 16));
  for (let y = from; y < to; y++) for (let x = from; x < to; x++) {
    const i = (y * code.width + x) * 4;
    code.data[i] = bg[0]; code.data[i + 1] = bg[1]; code.data[i + 2] = bg[2]; code.data[i + 3] = 255;
  }
  const inner = Math.round((box.size - 2) * scale);
  const fit = Math.min(inner / logo.width, inner / logo.height);
  const width = Math.max(1, Math.round(logo.width * fit));
  const height = Math.max(1, Math.round(logo.height * fit));
  const left = Math.round(from + (to - from - width) / 2);
  const top = Math.round(from + (to - from - height) / 2);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
    const s = (Math.min(logo.height - 1, Math.floor(y / fit)) * logo.width + Math.min(logo.width - 1, Math.floor(x / fit))) * 4;
    const d = ((top + y) * code.width + left + x) * 4;
    const alpha = logo.data[s + 3] / 255;
    for (let c = 0; c < 3; c++) code.data[d + c] = Math.round(logo.data[s + c] * alpha + code.data[d + c] * (1 - alpha));
  }
  return PNG.sync.write(code);
}
parentPort.on('message', ({ text, options, logo }) => {
  QRCode.toBuffer(text, options).then(
    (png) => parentPort.postMessage({ png: logo ? drawLogo(text, options, png, logo) : png }),
    (error) => parentPort.postMessage({ error: String(error && error.message || error) }),
  ).catch((error) => parentPort.postMessage({ error: String(error && error.message || error) }));
});
`;

export interface QrRenderPoolOptions {
  /** Threads rendering at once. */
  threads: number;
  /** Renders waiting for a thread; past it a render is refused at once. */
  maxQueue: number;
}

interface Task {
  text: string;
  options: QRCodeToBufferOptions;
  logo?: Buffer;
  resolve: (png: Buffer) => void;
  reject: (error: unknown) => void;
}

/** What a render is refused with when every thread is busy and the queue is full. */
const busy = () => rateLimited('Too many QR images are being drawn; try again shortly', 1);

/**
 * PNG QR codes drawn on worker threads: a 2048 px PNG costs a few hundred milliseconds of CPU,
 * which on the API's one thread would hold every other request up. Threads start on first use,
 * each draws one image at a time; the queue is bounded; `close` ends the threads and refuses the
 * renders still waiting. A thread that dies fails its render and is replaced on the next one.
 */
export function qrRenderPool({ threads, maxQueue }: QrRenderPoolOptions) {
  const { resolve: resolvePath } = createRequire(import.meta.url);
  const modules = { qrcode: resolvePath('qrcode'), pngjs: resolvePath('pngjs') };
  const idle: Worker[] = [];
  const queue: Task[] = [];
  let closed = false;
  const live = new Set<Worker>();

  /** The render each busy thread is drawing. */
  const drawing = new Map<Worker, Task>();

  const startThread = (): Worker => {
    const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: modules });
    worker.on('message', ({ png, error }: { png?: Uint8Array; error?: string }) => {
      const task = drawing.get(worker);
      drawing.delete(worker);
      if (error !== undefined || !png) task?.reject(new Error(`QR render failed: ${error}`));
      else task?.resolve(Buffer.from(png.buffer, png.byteOffset, png.byteLength));
      release(worker);
    });
    // A thread that fails ends: its render fails with it, and the next render starts a new thread.
    worker.on('error', () => {});
    worker.once('exit', () => {
      drawing.get(worker)?.reject(new Error('QR render thread ended'));
      drawing.delete(worker);
      live.delete(worker);
      const at = idle.indexOf(worker);
      if (at >= 0) idle.splice(at, 1);
      const next = closed ? undefined : queue.shift();
      if (next) run(startThread(), next);
    });
    live.add(worker);
    return worker;
  };

  const run = (worker: Worker, task: Task) => {
    drawing.set(worker, task);
    worker.postMessage({ text: task.text, options: task.options, logo: task.logo });
  };

  /** Gives a thread the next waiting render, or keeps it idle. */
  const release = (worker: Worker) => {
    if (closed) return;
    const next = queue.shift();
    if (next) run(worker, next);
    else idle.push(worker);
  };

  return {
    /**
     * The PNG of `text`, with `logo` (a PNG) over its centre when given; rejects with a 429 when
     * every thread is busy and the queue is full, and after `close`.
     */
    render(text: string, options: Omit<QRCodeToBufferOptions, 'type'>, logo?: Buffer): Promise<Buffer> {
      return new Promise<Buffer>((resolve, reject) => {
        if (closed) return reject(busy());
        const task: Task = { text, options: { ...options, type: 'png' }, logo, resolve, reject };
        const worker = idle.pop() ?? (live.size < threads ? startThread() : undefined);
        if (worker) run(worker, task);
        else if (queue.length < maxQueue) queue.push(task);
        else reject(busy());
      });
    },
    /** Threads running now. */
    get threads() {
      return live.size;
    },
    /** Ends every thread; waiting renders are refused and a render in progress fails. */
    async close(): Promise<void> {
      closed = true;
      for (const task of queue.splice(0)) task.reject(busy());
      await Promise.all([...live].map((worker) => worker.terminate()));
    },
  };
}
export type QrRenderPool = ReturnType<typeof qrRenderPool>;
