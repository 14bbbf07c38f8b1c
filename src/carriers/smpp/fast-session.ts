/**
 * How the gateway's SMPP sessions (its carrier binds and its customers'
 * binds) read and write PDUs, in place of the `smpp` package's own loop:
 *
 * - the hot PDUs (submit_sm, deliver_sm, their answers, enquire_link) are
 *   decoded and encoded by fixed layouts (fast-pdu.ts) giving the same
 *   objects and bytes as the package; anything else still goes through it;
 * - the socket is read whole: one read per wake-up, PDUs cut from it, where
 *   the package reads each PDU twice (length, then body) and copies it;
 * - the PDUs a session sends in one turn of the event loop leave in one
 *   socket write (corked until the turn ends).
 *
 * The package took about 30% of the event loop in the benchmarks (walking
 * every property of a PDU, prototype included, three times, a filter per
 * field); the fixed layouts cost a tenth of it.
 */
import smpp, { type Pdu, type Session } from './smpp-lib.ts';
import { decodePdu, encodePdu } from './fast-pdu.ts';

/** The package's session fields this file drives (its own `send` and `_extractPDUs` do the same). */
interface SessionState {
  sequence: number;
  paused: boolean;
  _busy: boolean;
  _callbacks: Record<number, (pdu: Pdu) => void>;
  _extractPDUs: () => void;
}

const HEADER = 16;

/** Wraps a session made by the package (client or server side) before it reads or sends anything. */
export function fastSession(session: Session): Session {
  const state = session as unknown as Session & SessionState;
  const { socket } = session;
  let pending: Buffer = Buffer.alloc(0);

  // What a read of the socket holds, cut into PDUs; the rest waits for the next read.
  state._extractPDUs = () => {
    if (state._busy) return;
    state._busy = true;
    while (!state.paused) {
      const length = pending.length >= 4 ? pending.readUInt32BE(0) : 0;
      if (pending.length < 4 || (length >= HEADER && length <= smpp.PDU.maxLength && pending.length < length)) {
        const chunk = socket.read() as Buffer | null;
        if (!chunk) break;
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        continue;
      }
      let pdu: Pdu;
      try {
        if (length > smpp.PDU.maxLength) throw new Error(`PDU length was too large (${length}, maximum is ${smpp.PDU.maxLength}).`);
        if (length < HEADER) throw new Error(`PDU length was too small (${length}, a header alone is ${HEADER}).`);
        const bytes = pending.subarray(0, length);
        pdu = decodePdu(bytes) ?? new smpp.PDU(bytes);
      } catch (err) {
        session.emit('error', err);
        return;
      }
      pending = pending.subarray(length);
      session.emit('pdu', pdu);
      session.emit(pdu.command, pdu);
      if (pdu.isResponse()) {
        const callback = state._callbacks[pdu.sequence_number];
        if (callback) {
          delete state._callbacks[pdu.sequence_number];
          callback(pdu);
        }
      }
    }
    state._busy = false;
  };
  // The package listens with its own method bound at construction; nothing else listens to 'readable'.
  socket.removeAllListeners('readable');
  socket.on('readable', () => state._extractPDUs());

  let corked = false;
  session.send = (pdu, responseCallback, sendCallback) => {
    if (!socket.writable) return false;
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(() => {
        corked = false;
        socket.uncork();
      });
    }
    if (!pdu.isResponse()) {
      // A proxy may send with the sequence number of its own peer; otherwise the next one.
      if (!pdu.sequence_number) {
        if (state.sequence === 0x7fffffff) state.sequence = 0;
        pdu.sequence_number = ++state.sequence;
      }
      if (responseCallback) state._callbacks[pdu.sequence_number] = responseCallback;
    } else if (responseCallback && !sendCallback) sendCallback = responseCallback;
    const bytes = encodePdu(pdu) ?? (pdu as smpp.PDU).toBuffer();
    if (sendCallback || session.listenerCount('send') > 0) {
      socket.write(bytes, () => {
        session.emit('send', pdu);
        sendCallback?.(pdu);
      });
    } else socket.write(bytes);
    return true;
  };
  return session;
}
