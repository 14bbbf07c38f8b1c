import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { StoredReply } from '../messaging/replies.ts';
import { SafeFetcher } from '../net/safe-fetch.ts';
import { Deliverer } from './deliverer.ts';
import { applyOptOut } from './optout.ts';

/**
 * Events, wired once at start-up by the core: the SSRF-safe outbound HTTP
 * client (shared with anything else that fetches customer URLs, e.g. RCS
 * media), the webhook deliverer loop, and the reply hook (opt-out, then a
 * wake-up so the reply's webhook goes out without waiting for a poll).
 */
export interface Events {
  fetcher: SafeFetcher;
  deliverer: Deliverer;
  /** Run after an inbound text is stored (core.onReply). */
  onReply(reply: StoredReply): Promise<void>;
  /** Starts the deliverer loop (only where the dispatcher runs). */
  start(): void;
  /** Stops the loop if started and closes the HTTP client. */
  close(): Promise<void>;
}

export function createEvents(db: Db, config: Config, log: Logger): Events {
  const fetcher = new SafeFetcher({ allow: config.GATEWAY_FETCH_ALLOW, connectTimeoutMs: config.WEBHOOK_TIMEOUT_MS });
  const deliverer = new Deliverer(db, fetcher, log.child({ component: 'webhooks' }), {
    pollMs: config.WEBHOOK_POLL_MS,
    concurrency: config.WEBHOOK_CONCURRENCY,
    perAccount: Math.min(config.WEBHOOK_CONCURRENCY, config.WEBHOOK_CONCURRENCY_PER_ACCOUNT ?? Math.ceil(config.WEBHOOK_CONCURRENCY / 2)),
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
    logDays: config.WEBHOOK_LOG_DAYS,
  });
  let started = false;
  return {
    fetcher,
    deliverer,
    async onReply(reply) {
      try {
        if (await applyOptOut(db.kysely, reply)) log.info({ accountId: reply.accountId, replyId: reply.id }, 'sender opted out: added to the blocklist');
      } catch (err) {
        log.error({ err, replyId: reply.id }, 'opt-out hook failed');
      }
      deliverer.wake();
    },
    start() {
      started = true;
      deliverer.start();
    },
    async close() {
      if (started) await deliverer.stop();
      await fetcher.close();
    },
  };
}
