import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, ENVIRONMENT_VARIABLES, loadConfig } from '../src/config.js';

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
  ])('refuses %j with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('drops a trailing slash from PUBLIC_BASE_URL', () => {
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/' }).publicBaseUrl).toBe('https://api.example.com');
  });

  it('is documented in the README, every variable', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const variable of ENVIRONMENT_VARIABLES) expect(readme, variable.name).toContain(`| \`${variable.name}\` |`);
  });
});
