// The operations of the OpenAPI document (GET /openapi.json), for the tests that walk all of them.

export interface Op {
  path: string;
  method: string;
  op: any;
  /** `POST /messages/sms/send` */
  name: string;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** Every operation of the document, in its order. */
export function operations(doc: any): Op[] {
  return Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, op]) => ({ path, method, op, name: `${method.toUpperCase()} ${path}` })),
  );
}

/** Routes that need no credential. */
export const PUBLIC = new Set(['/healthz', '/readyz', '/openapi.json', '/s/{code}', '/media/{name}', '/rbm/events/{connector}']);

export type Interface = 'operator' | 'legacy' | 'gateway' | 'panel' | 'public';

/** The interface a path belongs to, by the credential it needs. */
export function interfaceOf(path: string): Interface {
  if (PUBLIC.has(path)) return 'public';
  if (path.startsWith('/panel/api/')) return 'panel';
  if (path.startsWith('/admin/') || path === '/metrics') return 'operator';
  if (path.startsWith('/api/v2/')) return 'legacy';
  return 'gateway';
}
