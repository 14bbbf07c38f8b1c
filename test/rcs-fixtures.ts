import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import type { TestGateway } from './helpers.ts';

/** A customer with an RCS route (channel RCS) on the given connector, credits and a key. */
export async function rcsCustomer(gw: TestGateway, options: { balance?: number; farePrice?: string; connector?: string } = {}) {
  const account = await gw.admin('POST', '/admin/accounts', { name: 'RCS customer', balance: options.balance ?? 100 });
  const route = await gw.admin('POST', '/admin/routes', {
    displayName: 'RCS Simulator',
    productName: 'RCS',
    productId: 2,
    farePrice: options.farePrice ?? '0.25',
    replyFarePrice: '0.02',
    channel: 'RCS',
    connector: options.connector ?? 'simulator',
  });
  if (route.status !== 201) throw new Error(`route: ${JSON.stringify(route.body)}`);
  await gw.admin('POST', `/admin/accounts/${account.body.id}/routes`, { routeId: route.body.id });
  const key = await gw.admin('POST', `/admin/accounts/${account.body.id}/api-keys`, {});
  return { accountId: account.body.id as number, routeId: route.body.id as number, key: key.body.key as string };
}

export interface MediaServer {
  /** http://127.0.0.1:port */
  base: string;
  port: number;
  /** Paths requested so far. */
  hits: string[];
  pngBytes: Buffer;
  close(): Promise<void>;
}

/**
 * Serves test media on loopback: /wide.png (2000x1000 PNG), /photo.jpg
 * (JPEG 800x600), /doc.pdf, /page.html, /broken.png (not an image),
 * /big.pdf (bigBytes long), /missing (404), /to-private (302 to 10.0.0.1).
 */
export async function startMediaServer(bigBytes: number): Promise<MediaServer> {
  const png = await sharp({ create: { width: 2000, height: 1000, channels: 3, background: '#3366cc' } })
    .png()
    .toBuffer();
  const jpg = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#cc6633' } })
    .jpeg()
    .toBuffer();
  const pdf = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');
  const files: Record<string, [string, Buffer]> = {
    '/wide.png': ['image/png', png],
    '/photo.jpg': ['image/jpeg; charset=binary', jpg],
    '/doc.pdf': ['application/pdf', pdf],
    '/page.html': ['text/html; charset=utf-8', Buffer.from('<html>hi</html>')],
    '/broken.png': ['image/png', Buffer.from('this is not a png at all')],
    '/big.pdf': ['application/pdf', Buffer.alloc(bigBytes, 0x20)],
  };
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    hits.push(path);
    if (path === '/to-private') {
      res.writeHead(302, { location: 'http://10.0.0.1/secret.png' }).end();
      return;
    }
    const file = files[path];
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no');
      return;
    }
    res.writeHead(200, { 'content-type': file[0], 'content-length': file[1].length }).end(file[1]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    hits,
    pngBytes: png,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
