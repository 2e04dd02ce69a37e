import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, ENVIRONMENT_VARIABLES, loadConfig, postgresUrlForDisplay, redactedRedisUrl } from '../src/config.js';

describe('loadConfig', () => {
  it('has documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      publicBaseUrl: '',
      portfolioRateLimit: 120,
      portfolioRateWindowSeconds: 60,
      responseValidation: 'off',
      loadDemoData: true,
      logRequests: true,
      shutdownDelayMs: 0,
      workerHealthPort: undefined,
    });
    expect(config.databasePath.endsWith('data/app.db')).toBe(true);
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT must be an integer'],
    [{ PORT: '-1' }, 'PORT must be an integer'],
    [{ PORTFOLIO_RATE_LIMIT: '0' }, 'PORTFOLIO_RATE_LIMIT must be an integer ≥ 1'],
    [{ RESPONSE_VALIDATION: 'strict' }, 'RESPONSE_VALIDATION must be off, warn or enforce'],
    [{ DEMO_DATA: 'maybe' }, 'DEMO_DATA must be on or off'],
    [{ PUBLIC_BASE_URL: 'ftp://example.com' }, 'PUBLIC_BASE_URL must be an http(s) URL'],
    [{ AI_PROVIDER: 'anthropic' }, 'AI_PROVIDER must be offline or openai-compatible'],
    [{ AI_PROVIDER: 'openai-compatible', AI_MODEL: 'm' }, 'AI_PROVIDER=openai-compatible needs AI_BASE_URL'],
    [{ AI_PROVIDER: 'openai-compatible', AI_BASE_URL: 'http://127.0.0.1:8080/v1' }, 'AI_PROVIDER=openai-compatible needs AI_MODEL'],
    [{ AI_TIMEOUT_MS: '0' }, 'AI_TIMEOUT_MS must be an integer ≥ 1'],
    [{ AI_PRICE_INPUT_CENTS_PER_MILLION_TOKENS: '-1' }, 'AI_PRICE_INPUT_CENTS_PER_MILLION_TOKENS must be a number of cents'],
    [{ AI_PRICE_OUTPUT_CENTS_PER_MILLION_TOKENS: '0.0001' }, 'AI_PRICE_OUTPUT_CENTS_PER_MILLION_TOKENS must be a number of cents'],
    [{ DATABASE_URL: 'mysql://app@db.example/app' }, 'DATABASE_URL must be a postgres:// or postgresql:// URL'],
    [{ DATABASE_URL: 'postgres:///app' }, 'DATABASE_URL must be a postgres:// or postgresql:// URL with a host'],
    [{ DATABASE_URL: 'postgres://db.example/app', DATABASE_POOL_MAX: '0' }, 'DATABASE_POOL_MAX must be an integer ≥ 1'],
    [{ DATABASE_URL: 'postgres://db.example/app', DATABASE_CONNECT_TIMEOUT_MS: 'soon' }, 'DATABASE_CONNECT_TIMEOUT_MS must be an integer ≥ 1'],
    [{ DATABASE_URL: 'postgres://db.example/app', DATABASE_STATEMENT_TIMEOUT_MS: '-5' }, 'DATABASE_STATEMENT_TIMEOUT_MS must be an integer ≥ 0'],
    [{ SHUTDOWN_DELAY_MS: '5s' }, 'SHUTDOWN_DELAY_MS must be an integer ≥ 0'],
    [{ WORKER_HEALTH_PORT: 'on' }, 'WORKER_HEALTH_PORT must be an integer ≥ 0'],
  ])('refuses %j with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reads SHUTDOWN_DELAY_MS and WORKER_HEALTH_PORT (off by default)', () => {
    expect(loadConfig({ SHUTDOWN_DELAY_MS: '15000', WORKER_HEALTH_PORT: '3100' })).toMatchObject({ shutdownDelayMs: 15_000, workerHealthPort: 3100 });
    expect(loadConfig({ WORKER_HEALTH_PORT: 'off' }).workerHealthPort).toBeUndefined();
  });

  it('reads WEBHOOK_DELIVERY_LEASE_SECONDS (60 by default), refusing a lease no attempt fits in', () => {
    expect(loadConfig({}).webhookDeliveryLeaseMs).toBe(60_000);
    expect(loadConfig({ WEBHOOK_DELIVERY_LEASE_SECONDS: '16' }).webhookDeliveryLeaseMs).toBe(16_000);
    expect(() => loadConfig({ WEBHOOK_DELIVERY_LEASE_SECONDS: '15' })).toThrow(/WEBHOOK_DELIVERY_LEASE_SECONDS must be at least 16/);
    expect(() => loadConfig({ WEBHOOK_DELIVERY_LEASE_SECONDS: 'soon' })).toThrow(/WEBHOOK_DELIVERY_LEASE_SECONDS must be an integer/);
  });

  it('answers the AI routes offline by default, with the documented price table', () => {
    expect(loadConfig({}).ai).toEqual({
      provider: 'offline',
      baseUrl: '',
      apiKey: undefined,
      model: '',
      timeoutMs: 20_000,
      prices: { inputCentsPerMillionTokens: 15, outputCentsPerMillionTokens: 60 },
    });
    expect(
      loadConfig({
        AI_PROVIDER: 'openai-compatible',
        AI_BASE_URL: 'https://api.openai.com/v1/',
        AI_API_KEY: 'sk-x',
        AI_MODEL: 'gpt-4o-mini',
        AI_PRICE_INPUT_CENTS_PER_MILLION_TOKENS: '2.5',
      }).ai,
    ).toMatchObject({ provider: 'openai-compatible', baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-x', model: 'gpt-4o-mini', prices: { inputCentsPerMillionTokens: 2.5 } });
  });

  it('keeps the limits in SQLite without REDIS_URL, and reads the Redis settings with their defaults', () => {
    expect(loadConfig({}).redis).toBeUndefined();
    expect(loadConfig({ REDIS_URL: 'redis://:pw@redis.internal:6380/2' }).redis).toEqual({
      url: 'redis://:pw@redis.internal:6380/2',
      keyPrefix: 'contract-api:',
      connectTimeoutMs: 1_000,
      commandTimeoutMs: 500,
    });
    expect(loadConfig({ REDIS_URL: 'rediss://redis.internal', REDIS_KEY_PREFIX: 'staging:', REDIS_COMMAND_TIMEOUT_MS: '50' }).redis).toMatchObject({
      keyPrefix: 'staging:',
      commandTimeoutMs: 50,
    });
  });

  it.each([
    [{ REDIS_URL: 'http://:secret-pw@redis.internal' }, 'REDIS_URL must be a redis:// or rediss:// URL'],
    [{ REDIS_URL: 'not a url secret-pw' }, 'REDIS_URL must be a redis:// or rediss:// URL'],
    [{ REDIS_URL: 'redis://h', REDIS_COMMAND_TIMEOUT_MS: '0' }, 'REDIS_COMMAND_TIMEOUT_MS must be an integer ≥ 1'],
    [{ REDIS_URL: 'redis://h', REDIS_CONNECT_TIMEOUT_MS: 'soon' }, 'REDIS_CONNECT_TIMEOUT_MS must be an integer ≥ 1'],
  ])('refuses %j without repeating the URL (it may hold a password)', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
    try {
      loadConfig(env);
    } catch (error) {
      expect((error as Error).message).not.toContain('secret-pw');
    }
  });

  it('hides the user and password of a Redis URL in what it logs', () => {
    expect(redactedRedisUrl('redis://admin:s3cret@redis.internal:6380/2')).toBe('redis://***:***@redis.internal:6380/2');
    expect(redactedRedisUrl('redis://:s3cret@127.0.0.1:6379')).toBe('redis://:***@127.0.0.1:6379');
    expect(redactedRedisUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(redactedRedisUrl('redis://127.0.0.1:6379/0?password=s3cret')).toBe('redis://127.0.0.1:6379/0');
  });

  it('selects SQLite without DATABASE_URL and PostgreSQL with a postgres:// or postgresql:// one, with the documented pool defaults', () => {
    expect(loadConfig({}).postgres).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: '' }).postgres).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: 'postgres://app:secret@db.example:5432/app' }).postgres).toEqual({
      url: 'postgres://app:secret@db.example:5432/app',
      poolMax: 10,
      connectTimeoutMs: 5000,
      statementTimeoutMs: 15_000,
    });
    expect(
      loadConfig({
        DATABASE_URL: 'postgresql://app@localhost/app',
        DATABASE_POOL_MAX: '25',
        DATABASE_CONNECT_TIMEOUT_MS: '1000',
        DATABASE_STATEMENT_TIMEOUT_MS: '0',
      }).postgres,
    ).toMatchObject({ poolMax: 25, connectTimeoutMs: 1000, statementTimeoutMs: 0 });
  });

  it('never repeats the password of a refused DATABASE_URL', () => {
    for (const [url, given] of [
      ['mysql://app:hunter2@db.example/app', 'got a mysql: URL'],
      ['app:hunter2 at db.example', 'got a app: URL'],
      ['postgres:///app?password=hunter2', 'got one without a host'],
      ['//app:hunter2@db.example', 'got a value that is not a URL'],
    ]) {
      expect(() => loadConfig({ DATABASE_URL: url })).toThrow(given);
      expect(() => loadConfig({ DATABASE_URL: url })).not.toThrow(/hunter2/);
    }
    expect(postgresUrlForDisplay('postgres://app:hunter2@db.example:5432/app')).toBe('postgres://app:***@db.example:5432/app');
    expect(postgresUrlForDisplay('postgres://app@db.example/app?password=hunter2&sslmode=require')).toBe('postgres://app@db.example/app');
  });

  it('drops a trailing slash from PUBLIC_BASE_URL', () => {
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/' }).publicBaseUrl).toBe('https://api.example.com');
  });

  it('is documented in docs/configuration.md, every variable', () => {
    const reference = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    for (const variable of ENVIRONMENT_VARIABLES) expect(reference, variable.name).toContain(`| \`${variable.name}\` |`);
  });
});
