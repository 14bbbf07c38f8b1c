import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the secret
 * is `whsec_` + base64 of the key; the signature is
 * `v1,` + base64(HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")),
 * sent with `webhook-id` and `webhook-timestamp` (Unix seconds), so any
 * Standard Webhooks library verifies our deliveries.
 */

const PREFIX = 'whsec_';

/** A new secret: 32 random bytes. */
export function newSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The headers of one delivery attempt; `secret` null for unsigned (legacy) callbacks. */
export function deliveryHeaders(id: string, body: string, secret: string | null, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'messaging-gateway-webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    ...(secret ? { 'webhook-signature': sign(secret, id, timestamp, body) } : {}),
  };
}
