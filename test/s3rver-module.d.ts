/**
 * Types for the parts of `@20minutes/s3rver` (4.x) the media tests use: a
 * local S3-compatible server (real S3 REST protocol, SigV4 checked against
 * the S3RVER/S3RVER key pair, objects kept in a directory). The package
 * ships no types.
 */
declare module '@20minutes/s3rver' {
  import type { EventEmitter } from 'node:events';
  import type { AddressInfo } from 'node:net';

  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory?: string;
    resetOnClose?: boolean;
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
    /** Accept any well-formed signature (its check of a bucket listing by the current SDK is wrong). */
    allowMismatchedSignatures?: boolean;
  }

  /** Emitted for every object written or deleted, as S3 event notifications are. */
  interface S3rverEvent {
    Records: { eventName: string; s3: { bucket: { name: string }; object: { key: string; size?: number } } }[];
  }

  class S3rver extends EventEmitter {
    constructor(options?: S3rverOptions);
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    on(event: 'event', listener: (event: S3rverEvent) => void): this;
    on(event: string | symbol, listener: (...args: any[]) => void): this;
  }

  export default S3rver;
}
