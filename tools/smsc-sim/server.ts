/**
 * SMSC simulator: a real SMPP 3.4 server (the `smpp` package's server) on a
 * local port, for tests and for trying the gateway without a carrier.
 * It binds ESMEs with fixed credentials, answers submit_sm with message ids,
 * sends delivery receipts (text and TLVs) after a delay with outcomes chosen
 * by receiver suffix, injects MO messages, and on request misbehaves:
 * throttles, answers slowly or never, ignores enquire_link, cuts connections,
 * sends a receipt before its submit_sm_resp. It is strict about what it is
 * sent (see checks.ts) and records every accepted submit byte for byte.
 */
import { decodeText, ESM_UDHI } from '../../src/carriers/smpp/encoding.ts';
import smpp, { Status, pduBody, pduNumber, pduString, statusText, type Pdu, type Session } from '../../src/carriers/smpp/smpp-lib.ts';
import { parseUdh } from '../../src/carriers/smpp/udh.ts';
import { assemble, checkSubmit, moBody } from './checks.ts';
import { DeliveryQueue, type Delivery } from './deliveries.ts';
import { DEFAULT_RULES, formatId, receiptParams, ruleFor } from './outcomes.ts';

import type { MoMessage, SimModeChange, SimStats, SmscSimulator, SmscSimulatorOptions } from './types.ts';

export type { AssembledMessage, SubmitRecord } from './checks.ts';
export { DEFAULT_RULES, type OutcomeRule } from './outcomes.ts';
export type { MoMessage, SimModeChange, SimStats, SmscSimulator, SmscSimulatorOptions } from './types.ts';

type BindType = 'transceiver' | 'transmitter' | 'receiver';

export async function startSmscSimulator(options: SmscSimulatorOptions): Promise<SmscSimulator> {
  const log = options.log ?? (() => undefined);
  const rules = options.rules ?? DEFAULT_RULES;
  const idBase = options.idBase ?? 'hex';
  const receiptIdBase = options.receiptIdBase ?? idBase;
  const receiptDelayMs = options.receiptDelayMs ?? 10;
  const mode = {
    throttleNext: 0,
    throttleUntil: 0,
    queueFullNext: 0,
    responseDelayMs: 0,
    receiptBeforeResp: false,
    ignoreEnquireLink: false,
    ignoreSubmits: false,
    dropAfterSubmits: null as number | null,
  };
  const stats: SimStats = {
    connections: 0,
    binds: 0,
    bindFailures: 0,
    unbinds: 0,
    enquireLinks: 0,
    drops: 0,
    submits: [],
    refused: [],
    throttled: 0,
    receiptsSent: 0,
    moSent: 0,
  };
  const bindTypes = new Map<Session, BindType | null>();
  const timers = new Set<NodeJS.Timeout>();
  let nextId = 3_000_000_000n;
  let moReference = 0;

  const later = (ms: number, fn: () => void): void => {
    if (ms <= 0) return fn();
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };
  const receiving = (): Session[] => [...bindTypes].filter(([s, t]) => (t === 'receiver' || t === 'transceiver') && s.socket.writable).map(([s]) => s);
  const deliveries = new DeliveryQueue(receiving);
  /** Receipts kept while the holdReceipts mode is on. */
  let heldReceipts: Delivery[] | null = null;

  const dropConnections = (): void => {
    stats.drops++;
    log(`dropping ${bindTypes.size} connection(s)`);
    for (const session of bindTypes.keys()) session.socket.destroy();
  };

  const throttleStatus = (): number => {
    if (mode.throttleNext > 0) {
      mode.throttleNext--;
      return Status.RTHROTTLED;
    }
    if (Date.now() < mode.throttleUntil) return Status.RTHROTTLED;
    if (mode.queueFullNext > 0) {
      mode.queueFullNext--;
      return Status.RMSGQFUL;
    }
    return Status.ROK;
  };

  const onBind = (session: Session, pdu: Pdu): void => {
    const type: BindType = pdu.command === 'bind_receiver' ? 'receiver' : pdu.command === 'bind_transmitter' ? 'transmitter' : 'transceiver';
    if (bindTypes.get(session)) {
      session.send(pdu.response({ command_status: Status.RALYBND }));
      return;
    }
    const refuse = (status: number): void => {
      stats.bindFailures++;
      log(`bind_${type} refused: ${statusText(status)}`);
      session.send(pdu.response({ command_status: status }), () => session.close());
    };
    if (pduString(pdu, 'system_id') !== options.systemId) return refuse(Status.RBINDFAIL);
    if (pduString(pdu, 'password') !== options.password) return refuse(Status.RINVPASWD);
    bindTypes.set(session, type);
    stats.binds++;
    session.send(pdu.response({ system_id: 'SMSCSIM' }));
    log(`bound ${type} as ${options.systemId}`);
    deliveries.flush();
  };

  const onSubmit = (session: Session, pdu: Pdu): void => {
    const bindType = bindTypes.get(session);
    if (bindType !== 'transceiver' && bindType !== 'transmitter') {
      session.send(pdu.response({ command_status: Status.RINVBNDSTS }));
      return;
    }
    if (mode.dropAfterSubmits !== null && --mode.dropAfterSubmits <= 0) {
      mode.dropAfterSubmits = null;
      return dropConnections();
    }
    if (mode.ignoreSubmits) return;
    const respond = (params: { command_status?: number; message_id?: string }): void =>
      later(mode.responseDelayMs, () => void session.send(pdu.response(params)));
    const throttle = throttleStatus();
    if (throttle !== Status.ROK) {
      stats.throttled++;
      return respond({ command_status: throttle });
    }
    const receiver = pduString(pdu, 'destination_addr');
    const dataCoding = pduNumber(pdu, 'data_coding') ?? 0;
    const esmClass = pduNumber(pdu, 'esm_class') ?? 0;
    const bytes = Buffer.from(pduBody(pdu));
    const rule = ruleFor(rules, receiver);
    let status = receiver ? checkSubmit(dataCoding, esmClass, bytes) : Status.RINVDSTADR;
    if (status === Status.ROK && rule?.submitStatus) status = rule.submitStatus;
    if (status !== Status.ROK) {
      stats.refused.push({ receiver, status });
      log(`submit_sm to ${receiver} refused: ${statusText(status)}`);
      return respond({ command_status: status });
    }
    const messageId = formatId(nextId, idBase);
    const textId = receiptIdBase === 'decimal' ? nextId.toString().padStart(10, '0') : formatId(nextId, 'hex');
    nextId++;
    const sender = pduString(pdu, 'source_addr');
    const registeredDelivery = pduNumber(pdu, 'registered_delivery') ?? 0;
    stats.submits.push({ messageId, receiver, sender, dataCoding, esmClass, registeredDelivery, bytes });
    log(`submit_sm to ${receiver} dc=${dataCoding} esm=0x${esmClass.toString(16)} ${bytes.length} octets -> ${messageId}`);

    const stat = rule?.stat ?? 'DELIVRD';
    const wanted = registeredDelivery & 0x03;
    if (rule?.noReceipt || !(wanted === 1 || (wanted === 2 && stat !== 'DELIVRD'))) return respond({ message_id: messageId });
    const body = esmClass & ESM_UDHI ? (parseUdh(bytes)?.body ?? bytes) : bytes;
    const params = receiptParams({
      messageId,
      textId,
      receiver,
      sender,
      stat,
      err: rule?.err ?? '000',
      submittedAt: new Date(),
      text: decodeText(body, dataCoding),
      withText: options.receiptText ?? true,
      withTlvs: options.receiptTlvs ?? true,
    });
    const sendReceipt = (): void => {
      const delivery = { params, preferred: session, done: () => void stats.receiptsSent++ };
      if (heldReceipts) return void heldReceipts.push(delivery);
      log(`receipt ${stat} for ${messageId}`);
      deliveries.push(delivery);
    };
    if (mode.receiptBeforeResp) {
      sendReceipt();
      return respond({ message_id: messageId });
    }
    respond({ message_id: messageId });
    later(mode.responseDelayMs + receiptDelayMs, sendReceipt);
  };

  const onPdu = (session: Session, pdu: Pdu): void => {
    if (pdu.isResponse()) return; // deliver_sm_resp: handled by the send callback
    switch (pdu.command) {
      case 'bind_transceiver':
      case 'bind_transmitter':
      case 'bind_receiver':
        return onBind(session, pdu);
      case 'enquire_link':
        stats.enquireLinks++;
        if (!mode.ignoreEnquireLink) session.send(pdu.response());
        return;
      case 'unbind':
        stats.unbinds++;
        bindTypes.set(session, null);
        log('unbind');
        session.send(pdu.response(), () => session.close());
        return;
      case 'submit_sm':
        return onSubmit(session, pdu);
      case 'unknown':
        session.send(pdu.response());
        return;
      default:
        session.send(pdu.response({ command_status: bindTypes.get(session) ? Status.RINVCMDID : Status.RINVBNDSTS }));
    }
  };

  const server = smpp.createServer(options.tls ?? {}, (session) => {
    stats.connections++;
    bindTypes.set(session, null);
    session.on('error', (err: Error) => log(`connection error: ${err.message}`));
    session.on('close', () => {
      bindTypes.delete(session);
      deliveries.sessionClosed(session);
    });
    session.on('pdu', (pdu: Pdu) => {
      try {
        onPdu(session, pdu);
      } catch (err) {
        log(`error handling ${pdu.command}: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('SMSC simulator: no TCP address');
  log(`SMSC simulator listening on ${address.address}:${address.port}${options.tls ? ' (TLS)' : ''}`);

  return {
    port: address.port,
    stats,
    setMode(change: SimModeChange) {
      if (change.throttleNext !== undefined) mode.throttleNext = change.throttleNext;
      if (change.throttleForMs !== undefined) mode.throttleUntil = Date.now() + change.throttleForMs;
      if (change.queueFullNext !== undefined) mode.queueFullNext = change.queueFullNext;
      if (change.responseDelayMs !== undefined) mode.responseDelayMs = change.responseDelayMs;
      if (change.receiptBeforeResp !== undefined) mode.receiptBeforeResp = change.receiptBeforeResp;
      if (change.ignoreEnquireLink !== undefined) mode.ignoreEnquireLink = change.ignoreEnquireLink;
      if (change.ignoreSubmits !== undefined) mode.ignoreSubmits = change.ignoreSubmits;
      if (change.dropAfterSubmits !== undefined) mode.dropAfterSubmits = change.dropAfterSubmits;
      if (change.holdReceipts === true) heldReceipts ??= [];
      if (change.holdReceipts === false && heldReceipts) {
        const kept = heldReceipts;
        heldReceipts = null;
        for (const delivery of kept) deliveries.push(delivery);
      }
      log(`mode: ${JSON.stringify(change)}`);
    },
    dropConnections,
    injectMo(mo: MoMessage) {
      moReference = (moReference + 1) & 0xffff;
      const body = moBody(mo.text, { ...mo, reference: mo.ref16 ? moReference : moReference & 0xff });
      const parts = mo.reverse ? [...body.parts].reverse() : body.parts;
      log(`MO from ${mo.from} to ${mo.to} in ${parts.length} part(s)`);
      const sent = parts.map(
        (part) =>
          new Promise<void>((resolve) => {
            deliveries.push({
              params: {
                source_addr_ton: 1,
                source_addr_npi: 1,
                source_addr: mo.from.replace(/^\+/, ''),
                dest_addr_ton: 0,
                dest_addr_npi: 1,
                destination_addr: mo.to,
                esm_class: body.esmClass,
                data_coding: body.dataCoding,
                short_message: part,
              },
              preferred: null,
              done: () => {
                stats.moSent++;
                resolve();
              },
            });
          }),
      );
      return Promise.all(sent).then(() => undefined);
    },
    requestAll(command) {
      const bound = [...bindTypes].filter(([, type]) => type !== null).map(([session]) => session);
      log(`${command} to ${bound.length} ESME(s)`);
      return Promise.all(
        bound.map(
          (session) =>
            new Promise<number>((resolve) => {
              if (!session.send(new smpp.PDU(command), (resp) => resolve(resp.command_status))) resolve(-1);
            }),
        ),
      );
    },
    messages: () => assemble(stats.submits),
    pendingDeliveries: () => deliveries.pending,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      deliveries.close();
      for (const session of bindTypes.keys()) session.socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
