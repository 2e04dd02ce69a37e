// The one Redis connection of a server process (REDIS_URL) and whether it is usable now. An outage
// is logged once when it starts and once when it ends, never per request; while it lasts, callers
// decide without Redis and try it again at most every RETRY_AFTER_FAILURE_MS, so that a Redis
// that hangs costs one request the command timeout per interval, not every request.
import type { Redis } from 'ioredis';
import { answeredWithin } from '../answeredWithin.js';
import { redactedRedisUrl, type RedisConfig } from '../config.js';
import type { Logger } from '../logger.js';

/** After a failed or timed-out command, Redis is left alone this long (unless it reconnects first). */
const RETRY_AFTER_FAILURE_MS = 1_000;
/** The longest pause between two attempts to reconnect. */
const MAX_RECONNECT_PAUSE_MS = 2_000;

export interface RedisConnection {
  readonly redis: Redis;
  /**
   * False while there is no connection (a command would not be sent), and during an outage until
   * its retry time: decide without Redis.
   */
  usable(): boolean;
  /**
   * `command`'s answer, or NoAnswerInTime when none came within the command timeout
   * (REDIS_COMMAND_TIMEOUT_MS). An answer that arrived while this process was busy past the timeout
   * counts as in time: only Redis's own slowness makes it count as unreachable.
   */
  answer<T>(command: Promise<T>): Promise<T>;
  /** A command failed or timed out: Redis counts as unreachable (logged once per outage). */
  failed(error: unknown): void;
  /** A command was answered: an outage, if any, is over (logged once). */
  answered(): void;
  close(): Promise<void>;
}

/**
 * Connects (waiting at most the connect timeout) and keeps reconnecting in the background. A
 * Redis that cannot be reached at start-up does not stop the server: it starts in the outage.
 */
export async function openRedisConnection(config: RedisConfig, logger: Logger, clock: () => number = () => performance.now()): Promise<RedisConnection> {
  // Loaded here, at start-up when REDIS_URL is set: loading it in every server took about 0.2 s of CPU at each start.
  const { Redis } = await import('ioredis');
  const redis = new Redis(config.url, {
    lazyConnect: true,
    connectTimeout: config.connectTimeoutMs,
    // No commandTimeout: ioredis's timer would fire before an answer that arrived while this process was busy is read (see answer()).
    // A command is sent at once or fails at once: nothing waits in a queue for a connection.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_PAUSE_MS),
  });
  const address = redactedRedisUrl(config.url);
  let reachable = true;
  let retryAt = 0;
  let closed = false;
  const connection: RedisConnection = {
    redis,
    usable() {
      if (redis.status !== 'ready') return false;
      if (reachable) return true;
      if (clock() < retryAt) return false;
      // One call probes a Redis that failed; the others decide on their own counts until it answers.
      retryAt = clock() + RETRY_AFTER_FAILURE_MS;
      return true;
    },
    answer: (command) => answeredWithin(command, config.commandTimeoutMs),
    failed(error) {
      retryAt = clock() + RETRY_AFTER_FAILURE_MS;
      if (!reachable || closed) return;
      reachable = false;
      logger.warn('Redis unreachable: rate limits and quota are decided on this process\'s own counts until it answers again', {
        redis: address,
        error: error instanceof Error ? error.message : String(error),
      });
    },
    answered() {
      if (reachable) return;
      reachable = true;
      logger.info('Redis reachable again: rate limits and quota are counted in Redis', { redis: address });
    },
    async close() {
      closed = true;
      redis.disconnect();
    },
  };
  // Every failed reconnection attempt emits 'error'; without a listener ioredis would print each one.
  redis.on('error', (error: unknown) => connection.failed(error));
  redis.on('close', () => connection.failed(new Error('connection closed')));
  redis.on('ready', () => {
    retryAt = 0;
    connection.answered();
  });
  try {
    await redis.connect();
  } catch (error) {
    connection.failed(error);
  }
  return connection;
}
