/**
 * Accounts taking turns behind a backlog (docs/architecture.md "One
 * account's backlog"): a queue shared by accounts (a carrier connection's
 * outbox, the webhook deliveries) that has more due than one claim can take
 * gives each account with something due a share of the claim, instead of
 * taking the oldest rows whoever's they are, so that one account's backlog
 * holds back another's rows by one claim, not by the whole backlog.
 */
export interface Turns<T> {
  /** The first account after `from` (ascending) with rows in the queue, due or not; undefined past the last. */
  next(from: number): Promise<number | undefined>;
  /** Up to `count` of the account's rows that may go now, oldest first; none when it has nothing due. */
  take(account: number, count: number): Promise<T[]>;
}

/** Accounts served a claim: each gets up to its share, a claim's room divided by this. */
export const ACCOUNTS_A_CLAIM = 8;
/** Accounts looked at a claim (those with nothing due count too): bounds a claim's seeks when many accounts wait for later. */
export const VISITS_A_CLAIM = 64;

/**
 * Visits the accounts in ascending order from the one after `after`
 * (wrapping round once), taking up to a share of `room` from each, until
 * the room is full, ACCOUNTS_A_CLAIM accounts were served or
 * VISITS_A_CLAIM were looked at. Answers the rows taken and the last
 * account looked at: the next claim starts after it, so every account has
 * its turn within a few claims however many wait.
 */
export async function takeTurns<T>(turns: Turns<T>, after: number, room: number): Promise<{ rows: T[]; last: number | undefined }> {
  const share = Math.max(1, Math.ceil(room / ACCOUNTS_A_CLAIM));
  const rows: T[] = [];
  let served = 0;
  let visits = 0;
  let last: number | undefined;
  let from = after;
  // Starting from the first account, there is nothing to wrap round to.
  let wrapped = after <= 0;
  while (rows.length < room && served < ACCOUNTS_A_CLAIM && visits < VISITS_A_CLAIM) {
    const account = await turns.next(from);
    // Past the last account, or back where the visit started.
    if (account === undefined || (wrapped && after > 0 && account > after)) {
      if (wrapped) break;
      wrapped = true;
      from = 0;
      continue;
    }
    visits++;
    last = account;
    from = account;
    const taken = await turns.take(account, Math.min(share, room - rows.length));
    if (taken.length > 0) served++;
    rows.push(...taken);
  }
  return { rows, last };
}
