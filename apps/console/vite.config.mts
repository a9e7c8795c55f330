import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

// The console is static files the gateway serves at `/`: hashed names under assets/ (cached for a year), an
// index.html that is never cached, nothing inline (the page's Content-Security-Policy allows no inline script).
export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/apps/console', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    // The polyfill would be an inline script; every browser the console supports preloads modules itself.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: { proxy: { '/api': 'http://localhost:8080' } },
});
