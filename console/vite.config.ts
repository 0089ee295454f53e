// Builds the operator console into console/dist, served by src/console/plugin.ts under /console.
// Nothing inline (the CSP allows only same-origin files): no module-preload polyfill, CSS as files.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/console/',
  plugins: [preact({ devToolsInProd: false, prefreshEnabled: false })],
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    cssCodeSplit: false,
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
  },
});
