import { describe, expect, it } from 'vitest';
import { loadKeyRing } from '../../src/auth/keyRings.js';
import { loadSigningKeys } from '../../src/auth/oauth/signingKeys.js';
import { secretsCommand } from '../../src/cli/secretsCommand.js';
import { ConfigError, loadConfig, requireSharedSecrets, sharedSecretNames } from '../../src/config.js';

const run = () =>
  secretsCommand.run({ db: () => Promise.reject(new Error('opens no database')), databasePath: '/nowhere', env: {}, now: () => 1_790_000_000_000, values: {}, positionals: [] });

/** NAME='value' lines as a shell (or a compose env_file) reads them. */
function parseEnvLines(text: string): Record<string, string> {
  return Object.fromEntries(text.split('\n').map((line) => /^([A-Z_]+)='([^']*)'$/.exec(line)!.slice(1, 3) as [string, string]));
}

describe('admin secrets', () => {
  it('prints a new value of every shared secret, each one the server accepts, different on every run', async () => {
    const first = await run();
    const values = parseEnvLines(first.text);
    expect(Object.keys(values)).toEqual([...sharedSecretNames]);
    expect(first.json).toEqual(values);
    for (const name of sharedSecretNames.filter((name) => name !== 'OAUTH_SIGNING_JWK')) {
      expect(loadKeyRing(values[name], '/nowhere/unused.key', { name }).newest().key).toHaveLength(32);
    }
    expect(loadSigningKeys(values.OAUTH_SIGNING_JWK, '/nowhere/unused.json').keys()).toMatchObject([{ kty: 'EC', crv: 'P-256', alg: 'ES256' }]);
    const second = parseEnvLines((await run()).text);
    for (const name of sharedSecretNames) expect(second[name]).not.toBe(values[name]);
  });
});

describe('shared secrets with DATABASE_URL', () => {
  const base = { DATABASE_URL: 'postgres://app@127.0.0.1:5432/app' };

  it('are required from the environment, naming the missing ones and the command that makes them', () => {
    const env = { ...base, CURSOR_SECRET: 'x'.repeat(43) };
    expect(() => requireSharedSecrets(loadConfig(env), env)).toThrow(ConfigError);
    expect(() => requireSharedSecrets(loadConfig(env), env)).toThrow(
      'SESSION_JWT_SECRET, WEBHOOK_SECRET_KEY, OAUTH_COOKIE_SECRET, OAUTH_SIGNING_JWK are not set. Generate them once with `npm run --silent admin -- secrets > .env`',
    );
  });

  it('pass when all are set, and are not asked for on SQLite', async () => {
    const generated = (await run()).json as Record<string, string>;
    expect(() => requireSharedSecrets(loadConfig({ ...base, ...generated }), { ...base, ...generated })).not.toThrow();
    expect(() => requireSharedSecrets(loadConfig({}), {})).not.toThrow();
  });
});
