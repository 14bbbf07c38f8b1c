import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { MediaStorage } from '../rcs/media-storage.ts';

/** The sha256 of every media object an RCS payload names (src/rcs/payload.ts: `media.sha256`). */
const SHA256 = /"sha256":"([0-9a-f]{64})"/g;

/**
 * The media that messages still to be sent need: the sha256 named by the
 * payloads of `SCHEDULED`, `QUEUED` and `SENDING` messages, read connector by
 * connector along the outbox's partial index (messages_claim_idx), a page
 * at a time. (Once the carrier has a message, it has fetched the file.)
 */
export async function mediaInUse(db: Kysely<Database>, page = 1000): Promise<Set<string>> {
  const inUse = new Set<string>();
  // Literal status lists, so that both databases use the partial index (migration 005).
  const waiting = sql<boolean>`status in ('QUEUED', 'SCHEDULED', 'SENDING')`;
  const connectors = await db.selectFrom('messages').select('connector').distinct().where(waiting).execute();
  for (const { connector } of connectors) {
    let after: [number, string] | null = null;
    for (;;) {
      const from: [number, string] | null = after;
      const rows: { id: string; schedule_at: number; payload: string | null }[] = await db
        .selectFrom('messages')
        .select(['id', 'schedule_at', 'payload'])
        .where('connector', '=', connector)
        .where(waiting)
        .$if(from !== null, (q) =>
          q.where((eb) => {
            const [scheduleAt, id] = from as [number, string];
            return eb.or([eb('schedule_at', '>', scheduleAt), eb.and([eb('schedule_at', '=', scheduleAt), eb('id', '>', id)])]);
          }),
        )
        .orderBy('schedule_at')
        .orderBy('id')
        .limit(page)
        .execute();
      for (const r of rows) if (r.payload) for (const m of r.payload.matchAll(SHA256)) inUse.add(m[1] as string);
      const last = rows.at(-1);
      if (rows.length < page || !last) break;
      after = [Number(last.schedule_at), last.id];
    }
  }
  return inUse;
}

/**
 * Deletes the stored media that no send has stored or reused since the
 * cutoff and that no message still to be sent names. What is in use is read
 * before the storage is listed: a send accepted after that read has marked
 * its media used (putIfAbsent), and the storage looks at that time again
 * just before it deletes (removeIfUnusedSince).
 */
export async function deleteUnusedMedia(
  db: Kysely<Database>,
  storage: MediaStorage,
  cutoff: number,
  stopping: () => boolean,
): Promise<{ media: number; mediaKept: number }> {
  const inUse = await mediaInUse(db);
  let media = 0;
  let mediaKept = 0;
  for await (const object of storage.list()) {
    if (stopping()) break;
    if (object.usedAt >= cutoff) continue;
    if (inUse.has(object.name.slice(0, 64))) {
      mediaKept++;
      continue;
    }
    if (await storage.removeIfUnusedSince(object.name, cutoff)) media++;
  }
  return { media, mediaKept };
}
