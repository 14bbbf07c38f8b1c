/**
 * What a submit_sm_resp command_status means for the message (docs/carriers.md,
 * "What an SMSC's answer does"):
 *
 * - `throttle`: the SMSC is busy; the bind pauses with back-off and the part
 *   is sent again, up to maxThrottleRetries, then handed back as `temporary`.
 * - `bind`: the SMSC does not consider us bound; the bind is dropped and
 *   rebuilt, the message handed back for a retry.
 * - `temporary`: the SMSC could not take it now (its own failure, not the
 *   message's): handed back for a retry, and a route with another leg moves
 *   it there (failover).
 * - `permanent`: the message itself is refused (bad number, bad
 *   parameters): it fails and is refunded; no other leg is tried.
 *
 * A status this table does not name is permanent, ESME_RSUBMITFAIL and the
 * vendor codes (0x400-0x4FF) among them: retrying a refusal nobody can read
 * would repeat it (Kannel draws the same line).
 */
export type StatusClass = 'throttle' | 'bind' | 'temporary' | 'permanent';

/** command_status → class, for the statuses that are not permanent. */
export const STATUS_CLASSES: ReadonlyMap<number, { name: string; class: Exclude<StatusClass, 'permanent'> }> = new Map([
  [0x58, { name: 'ESME_RTHROTTLED', class: 'throttle' }],
  [0x14, { name: 'ESME_RMSGQFUL', class: 'throttle' }],
  [0x04, { name: 'ESME_RINVBNDSTS', class: 'bind' }],
  [0x08, { name: 'ESME_RSYSERR', class: 'temporary' }],
  [0x64, { name: 'ESME_RX_T_APPN', class: 'temporary' }],
]);

export function statusClass(status: number): StatusClass {
  return STATUS_CLASSES.get(status)?.class ?? 'permanent';
}
