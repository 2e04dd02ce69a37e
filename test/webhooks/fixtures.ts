/** Fixed inputs of the webhook signature tests: change none of them, the known vectors depend on them. */

/** `whsec_` + base64url of the bytes 1..32. */
export const SECRET_A = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA';
/** `whsec_` + base64url of the bytes 255..224. */
export const SECRET_B = 'whsec___79_Pv6-fj39vX08_Lx8O_u7ezr6uno5-bl5OPi4eA';

export const T = 1_700_000_000;
/** The clock of the tests in milliseconds: exactly T. */
export const NOW_MS = T * 1000;

export const ENVELOPE_BODY =
  '{"id":"evt_01HZX3K9Q2T7V","type":"task.created","apiVersion":"2025-01-15","createdAt":"2023-11-14T22:13:20.000Z",' +
  '"tenantId":"ten_demo","actor":{"id":"usr_1","kind":"USER"},"data":{"object":{"id":"tsk_1","status":"TODO"}}}';

/** HMAC-SHA256(SECRET_A, "1700000000." + ENVELOPE_BODY), computed once and kept as text. */
export const KNOWN_V1_A = '6866f3168763533164163a015961febf0a88dce519682f49ca0a29f7d1a2b027';
/** HMAC-SHA256(SECRET_B, "1700000000." + ENVELOPE_BODY). */
export const KNOWN_V1_B = 'a8d7727f5c1374d98631f9e4be03a3f11413d1de1d9529c61a9d2968eda04a23';

export function envelopeOf(id: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id,
    type: 'task.completed',
    apiVersion: '2025-01-15',
    createdAt: '2023-11-14T22:13:20.000Z',
    tenantId: 'ten_demo',
    actor: { id: 'usr_1', kind: 'USER' },
    data: { object: { id: 'tsk_1', status: 'DONE' } },
    ...extra,
  });
}
