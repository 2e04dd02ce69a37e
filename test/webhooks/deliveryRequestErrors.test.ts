import { describe, expect, it } from 'vitest';
import { classifyRequestError } from '../../src/webhooks/deliveryRequest.js';

function errno(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

// The attempt's error message is shown to the tenant in the delivery log: never the resolved address.
describe('classifyRequestError', () => {
  it.each([
    ['connect ECONNREFUSED 203.0.113.5:443', 'ECONNREFUSED', '203.0.113.5'],
    ['connect ECONNREFUSED ::1:4000', 'ECONNREFUSED', '::1'],
    ['connect ETIMEDOUT [2001:db8::7]:443', 'ETIMEDOUT', '2001:db8::7'],
    ['read ECONNRESET 198.51.100.20:8443', 'ECONNRESET', '198.51.100.20'],
  ])('"%s" → connection-failed without the address', (message, code, address) => {
    const error = classifyRequestError(errno(message, code), { tls: false, timeoutMs: 10_000 });
    expect(error.code).toBe('connection-failed');
    expect(error.message).toContain(code);
    expect(error.message).not.toContain(address);
    expect(error.message).toContain('<target>');
  });

  it('keeps a TLS failure recognizable', () => {
    const error = classifyRequestError(errno("Hostname/IP does not match certificate's altnames", 'ERR_TLS_CERT_ALTNAME_INVALID'), {
      tls: true,
      timeoutMs: 10_000,
    });
    expect(error).toEqual({ code: 'tls-failure', message: "ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames" });
  });
});
