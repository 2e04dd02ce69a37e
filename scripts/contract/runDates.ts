// Dates a run of the API's requests must compute when it runs, not take from the examples: a
// contract's expiry must lie ahead when it is sent, a replay reaches 30 days back at most. The
// Postman collections (as collection variables set before each request) and the conformance
// runner (as values at the time of the call) both read them from here.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A date `offsetMs` from the time of the request, as an RFC 3339 date or date-time. */
interface RunDate {
  offsetMs: number;
  form: 'date' | 'date-time';
}

export const RUN_DATES = {
  now: { offsetMs: 0, form: 'date-time' },
  anHourAgo: { offsetMs: -HOUR, form: 'date-time' },
  in30Days: { offsetMs: 30 * DAY, form: 'date' },
  in60Days: { offsetMs: 60 * DAY, form: 'date' },
} as const satisfies Record<string, RunDate>;

export type RunDateName = keyof typeof RUN_DATES;

/** Per operation, the body members set to a run date instead of their example's value. */
export const RUN_DATE_BODY_MEMBERS: Record<string, Record<string, RunDateName>> = {
  createContract: { expiresOn: 'in30Days' },
  updateContract: { expiresOn: 'in60Days' },
  replayWebhookEvents: { from: 'anHourAgo', to: 'now' },
};

export function runDateValue(name: RunDateName, now: number): string {
  const { offsetMs, form } = RUN_DATES[name];
  const value = new Date(now + offsetMs).toISOString();
  return form === 'date' ? value.slice(0, 10) : value;
}

/** A Postman pre-request script that sets every run date as a collection variable of its name. */
export function runDatesScript(): string[] {
  return [
    'const now = Date.now();',
    ...Object.entries(RUN_DATES).map(
      ([name, { offsetMs, form }]) => `pm.collectionVariables.set('${name}', new Date(now + ${offsetMs}).toISOString()${form === 'date' ? '.slice(0, 10)' : ''});`,
    ),
  ];
}

/** The body members of RUN_DATE_BODY_MEMBERS as Postman templates (`{{in30Days}}`), per operation. */
export function runDateTemplates(): Record<string, Record<string, string>> {
  return Object.fromEntries(
    Object.entries(RUN_DATE_BODY_MEMBERS).map(([operationId, members]) => [operationId, Object.fromEntries(Object.entries(members).map(([member, name]) => [member, `{{${name}}}`]))]),
  );
}

/** `body` with the operation's run-date members set to their values at `now` (a copy; other bodies as they are). */
export function withRunDates(operationId: string, body: unknown, now: number): unknown {
  const members = RUN_DATE_BODY_MEMBERS[operationId];
  if (!members || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  return { ...body, ...Object.fromEntries(Object.entries(members).map(([member, name]) => [member, runDateValue(name, now)])) };
}
