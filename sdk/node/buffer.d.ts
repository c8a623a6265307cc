// TypeScript declarations of snowflake-ids/buffer (buffer.js). docs/sdk.md "The ID buffer".
import { SnowflakeError } from './index';

export { SnowflakeError };

export interface IdBufferOptions {
    /** The nodes' HTTP endpoints (snowflake.http_listen), or one load balancer: a URL, "url,url" or a list. */
    urls: string | string[];
    /** The nodes' token, sent as "Authorization: Bearer <token>". */
    token?: string;
    /** The smallest batch asked for (1 to 10000; default 100); the first batch's size. */
    minBatch?: number;
    /** The largest batch asked for (minBatch to 10000; default 10000). */
    maxBatch?: number;
    /** Refill when the current batch has fewer ids left (default half the batch size). */
    refillAt?: number;
    /** How long one request may take, connect to last byte, in ms (default 5000). */
    timeoutMs?: number;
    /** How long nextId() waits for a refill by default, in ms (default 10000). */
    waitMs?: number;
    /** How often a node left out is asked /readyz, in ms (default 500). */
    probeIntervalMs?: number;
}

export interface IdBufferNodeStats {
    url: string;
    up: boolean;
    inflight: number;
    latencyMs: number;
    batches: number;
    failures: number;
    lastError?: string;
}

export interface IdBufferStats {
    available: number;
    batchSize: number;
    refills: number;
    waiting: number;
    closed: boolean;
    lastError?: string;
    nodes: IdBufferNodeStats[];
}

export class IdBuffer {
    constructor(options: IdBufferOptions);
    /** The next id; rejects with a SnowflakeError (57014, 08006, 28000, 55000) when none came in time. */
    nextId(options?: { timeout?: number }): Promise<bigint>;
    /** An id held now, or undefined; never waits. */
    tryNextId(): bigint | undefined;
    /** Ends every wait and request; the ids held are dropped. */
    close(): Promise<void>;
    stats(): IdBufferStats;
    readonly available: number;
    readonly closed: boolean;
}

export function nextBatchSize(size: number, lifeMs: number, min: number, max: number): number;
export function parseBatch(text: string, count: number, url?: string): bigint[];
export const MAX_BATCH: number;
