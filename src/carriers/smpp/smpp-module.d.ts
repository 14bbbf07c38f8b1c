/**
 * Types for the parts of the `smpp` npm package (0.5.x) we use. The package
 * ships no types; fields of a decoded PDU depend on its command, so they are
 * `unknown` and read through the checked accessors in smpp-lib.ts.
 */
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server as NetServer, Socket } from 'node:net';

  namespace smpp {
    /** Parameter values the package can write: integers, C-strings, octet strings. */
    type PduValue = string | number | Buffer;
    type PduParams = Record<string, PduValue | undefined>;

    interface Pdu {
      command: string;
      command_id: number;
      command_status: number;
      sequence_number: number;
      isResponse(): boolean;
      /** Response PDU for this request (generic_nack for unknown commands). */
      response(options?: PduParams): Pdu;
      [field: string]: unknown;
    }

    class PDU implements Pdu {
      constructor(command: string | Buffer, options?: PduParams);
      /** The longest PDU read (command_length); longer ones are refused with an error. */
      static maxLength: number;
      command: string;
      command_id: number;
      command_status: number;
      sequence_number: number;
      isResponse(): boolean;
      response(options?: PduParams): Pdu;
      toBuffer(): Buffer;
      [field: string]: unknown;
    }

    class Session extends EventEmitter {
      constructor(options: { socket: Socket });
      socket: Socket;
      /** Writes a PDU; assigns sequence_number to requests. False when the socket is not writable. */
      send(pdu: Pdu, responseCallback?: (response: Pdu) => void, sendCallback?: (pdu: Pdu) => void): boolean;
      close(callback?: () => void): void;
      destroy(callback?: () => void): void;
      pause(): void;
      resume(): void;
    }

    class Server extends NetServer {
      sessions: Session[];
    }

    interface MessageFilter {
      encode(this: unknown, value: unknown): unknown;
      decode(this: unknown, value: unknown, skipUdh?: boolean): unknown;
    }

    function createServer(options: object, listener?: (session: Session) => void): Server;

    /** Error name -> command_status value (ESME_R...). */
    const errors: Record<string, number>;
    const filters: { message: MessageFilter };
  }

  export = smpp;
}
