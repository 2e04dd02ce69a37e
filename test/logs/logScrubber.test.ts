// The logger's two defences, case by case: the scrubber of free text (one case per credential
// shape, and what it must leave alone), and the members pino's redact and the scrubber replace.
import { describe, expect, it } from 'vitest';
import { REDACTED, scrubText } from '../../src/logScrubber.js';
import { memoryLogger } from '../support/testApp.js';

const opaque43 = 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v';

describe('scrubText', () => {
  it.each([
    ['a PAT', `svc_pat_${opaque43}`],
    ['a portfolio API key', `pfk_${opaque43}`],
    ['an OAuth client secret', `svc_ocs_${opaque43}`],
    ['a webhook signing secret', 'whsec_c2VjcmV0LXNpZ25pbmcta2V5'],
    ['a session JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJlLWJ5dGVz'],
    ['an opaque OAuth token', opaque43],
    ['a GitHub classic token', 'ghp_16C7e42F292c6912E7710c838347Ae178B4a'],
    ['a GitHub OAuth token', 'gho_16C7e42F292c6912E7710c838347Ae178B4a'],
    ['a GitHub fine-grained token', 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz'],
    ['an AI provider key', 'sk-proj-abcdefghijklmnop1234'],
  ])('removes %s standing alone and inside words', (_kind, secret) => {
    for (const text of [secret, `GitHub said: ${secret}.`, `{"message":"bad credential ${secret}"}`]) {
      const scrubbed = scrubText(text);
      expect(scrubbed).not.toContain(secret);
      expect(scrubbed).toContain(REDACTED);
    }
  });

  it.each([
    ['Bearer values', 'Authorization: Bearer abcdefg12345', 'abcdefg12345'],
    ['Basic values', 'Basic dXNlcjpodW50ZXIy', 'dXNlcjpodW50ZXIy'],
    ['Bearer inside a pair', 'key=Bearer sk-abcdefghijkl', 'sk-abcdefghijkl'],
    ['token= pairs', '?token=opaque123&state=open', 'opaque123'],
    ['key= pairs', 'api_key: zzz999', 'zzz999'],
    ['password= pairs', 'password=hunter22', 'hunter22'],
    ['JSON members named like secrets', '{"client_secret":"abc999def"}', 'abc999def'],
    ['JSON-escaped members in a quoted body', '"{\\"password\\": \\"hunter22\\"}"', 'hunter22'],
    ['email addresses', 'owner ava.moreno@northwind.example wrote', 'ava.moreno@northwind.example'],
  ])('removes %s', (_kind, text, secret) => {
    expect(scrubText(text)).not.toContain(secret);
  });

  it('removes a known secret whatever its shape, and its URL-encoded form', () => {
    const stored = 'Zx!weird~cred.4242';
    const scrubbed = scrubText(`echo ${stored} and ${encodeURIComponent(stored)}`, [stored]);
    expect(scrubbed).toBe(`echo ${REDACTED} and ${REDACTED}`);
  });

  it("removes the password of a URL's user information, and keeps one already masked", () => {
    expect(scrubText('connecting to redis://:hunter2-Secret@127.0.0.1:6379/0')).toBe(`connecting to redis://:${REDACTED}@127.0.0.1:6379/0`);
    expect(scrubText('postgres://app:s3cr3t@db.internal:5432/app')).toBe(`postgres://app:${REDACTED}@db.internal:5432/app`);
    expect(scrubText('Redis at redis://:***@127.0.0.1:46463 is unreachable')).toBe('Redis at redis://:***@127.0.0.1:46463 is unreachable');
  });

  it('leaves ids, request ids, URLs and ordinary words alone', () => {
    const text = 'req_3dde0c054a7dcdc5c2e78e12 GET http://127.0.0.1:3000/repos/acme/widgets/issues?state=open answered 503 for tsk_01HX2Y3Z and prj_alpha: keyboard monkey';
    expect(scrubText(text)).toBe(text);
  });
});

describe('the logger', () => {
  it('writes JSON lines (time, level, msg, fields) and replaces members named like secrets or personal data at any depth', () => {
    const lines: string[] = [];
    const logger = memoryLogger(lines);
    logger.error('upstream failed', {
      requestId: 'req_1',
      connectorId: 'con_1',
      authorization: 'Bearer abc',
      headers: { authorization: 'Basic xyz', cookie: 'sid=1', accept: 'application/json' },
      contact: { id: 'ctc_1', email: 'ava@northwind.example', nested: { password: 'pw-1', token: 'tok-1' } },
      error: new Error(`GitHub said token=ghp_16C7e42F292c6912E7710c838347Ae178B4a`, { cause: new Error('key=sk-abcdefghijklmnop') }),
    });
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ level: 'error', msg: 'upstream failed', requestId: 'req_1', connectorId: 'con_1', authorization: REDACTED });
    expect(typeof line.time).toBe('string');
    expect(line.headers).toEqual({ authorization: REDACTED, cookie: REDACTED, accept: 'application/json' });
    expect(line.contact).toEqual({ id: 'ctc_1', email: REDACTED, nested: { password: REDACTED, token: REDACTED } });
    expect(line.error.name).toBe('Error');
    for (const secret of ['ghp_16C7e42F292c6912E7710c838347Ae178B4a', 'sk-abcdefghijklmnop', 'pw-1', 'tok-1', 'ava@northwind.example', 'Basic xyz']) {
      expect(lines[0]).not.toContain(secret);
    }
    expect(line.error.cause.message).toBe(`key=${REDACTED}`);
  });

  it('scrubs the message itself too', () => {
    const lines: string[] = [];
    memoryLogger(lines).warn('refused Bearer abcdef123456');
    expect(JSON.parse(lines[0]!).msg).toBe(`refused Bearer ${REDACTED}`);
  });
});
