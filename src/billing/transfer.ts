import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.ts';
import type { Dialect } from '../db/dialect.ts';
import { DomainError } from '../common/errors.ts';
import { addLedgerEntry, lockBalances } from './ledger.ts';

/** Which side lacked the credits. */
export type TransferShortfall = 'RESELLER_BALANCE' | 'CHILD_BALANCE';

export class TransferError extends DomainError {
  constructor(
    readonly shortfall: TransferShortfall,
    /** What the side that pays has, and what the transfer needed (micro-units). */
    readonly available: number,
    readonly needed: number,
  ) {
    super(
      'INSUFFICIENT_BALANCE',
      shortfall === 'RESELLER_BALANCE' ? 'The reseller lacks the balance for this transfer.' : 'The sub-account lacks the balance to return.',
    );
  }
}

export interface Transferred {
  /** Balances after the transfer (micro-units). */
  child: number;
  reseller: number;
}

/**
 * The one credit transfer between a reseller and its sub-account (legacy
 * `PUT /credits`, `POST /child-users/{id}/credits`): `amount` micro-units go
 * reseller -> sub-account, a negative amount back. One transaction, both
 * accounts locked in id order (as the send path locks them), neither balance
 * below zero, a ledger entry on each side. The caller checks that `childId`
 * is the reseller's.
 */
export async function transferCredits(db: Kysely<Database>, dialect: Dialect, resellerId: number, childId: number, amount: number): Promise<Transferred> {
  return db.transaction().execute(async (tx) => {
    const balances = await lockBalances(tx, dialect, [resellerId, childId]);
    const toChild = amount > 0;
    const [from, to] = toChild ? [resellerId, childId] : [childId, resellerId];
    const moved = Math.abs(amount);
    const available = balances.get(from) ?? 0;
    if (available < moved) throw new TransferError(toChild ? 'RESELLER_BALANCE' : 'CHILD_BALANCE', available, moved);
    // The reasons the legacy balance history has always shown.
    const fromBalance = await addLedgerEntry(tx, from, -moved, `transfer to account ${to}`, null);
    const toBalance = await addLedgerEntry(tx, to, moved, `transfer from account ${from}`, null);
    return toChild ? { child: toBalance, reseller: fromBalance } : { child: fromBalance, reseller: toBalance };
  });
}
