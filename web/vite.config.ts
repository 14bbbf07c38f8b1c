import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The panel (docs/panel.md): served by the gateway at /panel/ from web/dist.
// `npm run dev:web` serves it with hot reload and forwards the API to a gateway on :3000.
const gateway = process.env.GATEWAY_URL ?? 'http://127.0.0.1:3000';
const proxied = ['/panel/api', '/messages', '/reports', '/contacts', '/routes', '/balance', '/webhooks', '/child-users', '/short-links', '/api', '/admin'];

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/panel/',
  plugins: [react()],
  resolve: {
    alias: { '@messaging-gateway/client': fileURLToPath(new URL('../clients/typescript/index.ts', import.meta.url)) },
  },
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1000 },
  server: { proxy: Object.fromEntries(proxied.map((p) => [p, gateway])) },
});
