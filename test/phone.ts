import assert from 'node:assert/strict';
import type { TestGateway } from './helpers.ts';

/**
 * What the phones received: every text the simulator carrier is handed,
 * by message id. The gateway keeps no readable one-time code once the
 * carrier has the SMS, so tests read codes here, as a phone would.
 */
export function phones(gw: TestGateway) {
  const texts = new Map<string, string>();
  const sim = gw.core.simulator;
  const submit = sim.submit.bind(sim);
  sim.submit = async (messages, onResult) => {
    for (const m of messages) texts.set(m.id, m.content);
    return submit(messages, onResult);
  };

  /** The text the carrier got for the (single) message of a request; waits until it has it. */
  async function textOf(requestId: string): Promise<string> {
    const row = await gw.core.db.kysely.selectFrom('messages').select('id').where('request_id', '=', requestId).executeTakeFirstOrThrow();
    return (
      (await gw.eventually(
        async () => texts.get(row.id),
        (t) => t !== undefined,
        `the SMS of request ${requestId} at the carrier`,
      )) ?? ''
    );
  }

  /** The 6-digit code the phone received for a token request. */
  async function codeOf(requestId: string): Promise<string> {
    const text = await textOf(requestId);
    const code = /(\d{6})$/.exec(text)?.[1];
    assert.ok(code, `a 6-digit code in "${text}"`);
    return code;
  }

  return { texts, textOf, codeOf };
}

/** A 6-digit code other than `code`, different for each `n`. */
export const wrongCode = (code: string, n: number) => String((Number(code) + 1 + n) % 1_000_000).padStart(6, '0');
