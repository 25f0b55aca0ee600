import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { rateLimited } from '@deeplink/core';
import type { QRCodeToBufferOptions } from 'qrcode';

// The API ships as one bundled file, so the thread's code is evaluated from this string rather than
// loaded from a file of its own. It loads qrcode from the path this module resolves, the same copy.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const QRCode = require(workerData.qrcode);
parentPort.on('message', ({ text, options }) => {
  QRCode.toBuffer(text, options).then(
    (png) => parentPort.postMessage({ png }),
    (error) => parentPort.postMessage({ error: String(error && error.message || error) }),
  );
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
  const qrcode = createRequire(import.meta.url).resolve('qrcode');
  const idle: Worker[] = [];
  const queue: Task[] = [];
  let closed = false;
  const live = new Set<Worker>();

  /** The render each busy thread is drawing. */
  const drawing = new Map<Worker, Task>();

  const startThread = (): Worker => {
    const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: { qrcode } });
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
    worker.postMessage({ text: task.text, options: task.options });
  };

  /** Gives a thread the next waiting render, or keeps it idle. */
  const release = (worker: Worker) => {
    if (closed) return;
    const next = queue.shift();
    if (next) run(worker, next);
    else idle.push(worker);
  };

  return {
    /** The PNG of `text`; rejects with a 429 when every thread is busy and the queue is full, and after `close`. */
    render(text: string, options: Omit<QRCodeToBufferOptions, 'type'>): Promise<Buffer> {
      return new Promise<Buffer>((resolve, reject) => {
        if (closed) return reject(busy());
        const task: Task = { text, options: { ...options, type: 'png' }, resolve, reject };
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
