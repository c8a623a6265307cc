// TypeScript declarations of snowflake-ids (index.js). docs/sdk.md#nodejs.

export interface GeneratorOptions {
    /** etcd's client URLs: "http://host:port[,...]" or a list of them. */
    etcdEndpoints?: string | string[];
    /** ZooKeeper's servers: "host:port[,...]" or a list of them. */
    zookeeperHosts?: string | string[];
    /** An id of the layout (0..1023 for twitter, 0..63 for js-safe): exactly this worker id (leased with a
     *  coordinator, else static with markFile). */
    workerId?: number;
    /** The range a leased id is chosen from: '512-1023', [512, 1023] or { min, max }; by default the layout's
     *  upper half (512-1023 for twitter, 32-63 for js-safe). */
    workerIds?: string | [number, number] | { min: number; max: number };
    /** The registry's key prefix (default "/snowflake"). */
    leasePrefix?: string;
    /** The lease's time to live in seconds (5 to 300; default 30). */
    leaseTtl?: number;
    /** The epoch: ISO 8601 with an offset, or a Date (default 2025-01-01 00:00:00+00). */
    epoch?: string | Date;
    /** The bit layout of the ids, as the nodes' snowflake.layout: 'twitter' (the default), 'js-safe' (every id
     *  below 2^53: Number(id) is exact) or 'time T, worker W, sequence S'. Ids are bigints in every layout. */
    layout?: string;
    /** How far the clock may step back before ids stop (default 5). */
    clockToleranceMs?: number;
    /** A step back past the tolerance: refuse (SF001, the default) or go on under a backup worker id. */
    clockBackwards?: 'refuse' | 'failover';
    /** The high-water mark file of a static worker id (required then; locked while open). */
    markFile?: string;
    /** How long open() waits for a worker id, in milliseconds (default 30000). */
    timeout?: number;
}

export interface Decoded {
    timestamp: Date;
    msSinceEpoch: number;
    workerId: number;
    sequence: number;
}

export interface GeneratorStats {
    state: 'static' | 'acquiring' | 'held' | 'expired' | 'closed';
    workerId: number | null;
    backupWorkerId: number | null;
    coordinator: 'etcd' | 'zookeeper' | 'static' | string;
    idsIssued: number;
    leaseMsLeft: number | null;
    reservedUntilUnixMs: number | null;
    clockBackwardsEvents: number;
    clockBackwardsErrors: number;
    overflowWaits: number;
    leaseAcquisitions: number;
    leaseFailures: number;
    pid: number;
    lastError: string | null;
    /** 'twitter', 'js-safe', or the widths ('time 40, worker 12, sequence 11, unit 1ms'). */
    layout: string;
}

export type SnowflakeErrorReason =
    | 'CLOCK_BEHIND' | 'CLOCK_RANGE' | 'NO_LEASE' | 'CLOCK_UNSYNC' | 'INVALID' | 'NOT_READY'
    | 'CLOSED' | 'FLEET' | 'MARK_FILE' | 'MARK_LOCKED' | 'NO_MEMORY'
    // the ID buffer's (buffer.d.ts)
    | 'AUTH' | 'UNAVAILABLE' | 'PROTOCOL';

export class SnowflakeError extends Error {
    /** The SQLSTATE: 'SF001', 'SF003', '22023', '57014', '55000', '58030', '55006', '53200';
     *  the ID buffer's '28000', '08006', '08P01'. */
    code: string;
    sqlstate: string;
    reason: SnowflakeErrorReason;
    detail?: string;
    hint?: string;
}

export class Generator {
    private constructor();
    /** Resolves once a worker id is held; rejects with a SnowflakeError. */
    static open(options?: GeneratorOptions): Promise<Generator>;
    /** The fields of an id under an epoch (the default one when omitted) and a layout (twitter when omitted). */
    static decode(id: bigint | string | number, options?: { epoch?: string | Date | number; layout?: string }): Decoded;
    nextId(): bigint;
    nextIdString(): string;
    nextIds(n: number): BigInt64Array;
    stats(): GeneratorStats;
    /** Resolves once ids can be issued (a worker id held); rejects with NOT_READY (57014) after
     * `timeout` ms (30000 by default), or CLOSED (55000) once closed. */
    waitReady(options?: { timeout?: number }): Promise<void>;
    readonly closed: boolean;
    close(): Promise<void>;
}

export { IdBuffer, IdBufferOptions } from './buffer';

export const version: string;
