import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/** Where `npm run dev` sends /api: the API that `npm start` runs, unless API_URL says otherwise. */
const apiUrl = process.env.API_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  resolve: {
    alias: { '@deeplink/client': fileURLToPath(new URL('../../packages/client/src/index.ts', import.meta.url)) },
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Everything in files the CSP allows: no inline data: scripts or styles.
    assetsInlineLimit: 0,
    reportCompressedSize: true,
  },
  server: {
    host: '127.0.0.1',
    proxy: { '/api': { target: apiUrl, changeOrigin: false } },
  },
});
