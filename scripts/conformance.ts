// npm run conformance -- --base-url URL --token TOKEN [--api work-platform|portfolio] [--limited-token TOKEN] [--allow-unexercised IDS] [--request-timeout SECONDS] [--json]
import { parseArgs } from 'node:util';
import { formatReport, runConformance, type ApiName } from './conformance/conformanceRun.js';

const HELP = `Usage: npm run --silent conformance -- --base-url URL --token TOKEN [options]

Walks every operation of a live server's contract (its served openapi.json) and checks every
answer against it: no server error, a declared status, content type, headers and body; and the
refusals the contract promises: no or a bad credential 401, a token without the scopes 403, an
undeclared method 405 with Allow, a malformed parameter or body 400/422, a deleted resource 404.

It first creates the records it calls operations on, with the contract's create operations and
their examples (ids and ETags taken from the create answers; where an example names another record,
the runner's own), so it needs no demo data. Calls that change or delete a record act on one it
created for them, and it deletes what it created at the end. Lists give the records of APIs that
cannot create them (the portfolio's slugs). It changes data: point it at a test deployment.

An operation is exercised only when a call of it succeeded (2xx). An answer such as 404 on an id,
409 on a record's state or 502 from a third party is still checked against the contract, but the
operation is reported as not exercised, with that answer as the reason. Before giving up on a 409,
the runner tries each other operation that changes such a record first (send before sign).

It reports the operations exercised (n of m), the declared statuses seen per operation and in all,
and every violation with its request.

Exit status: 0 when no answer breaks the contract and every operation was exercised or is named by
--allow-unexercised; 1 otherwise; 2 on a usage error or when the server cannot be reached.

Options:
  --base-url URL             The server, e.g. http://localhost:3000 (required).
  --token TOKEN              A credential with every scope: a Personal Access Token (work-platform)
                             or an API key (portfolio) (required).
  --api NAME                 work-platform (default) or portfolio.
  --limited-token TOKEN      A token of the same workspace without scopes, to check the 403s
                             (without it those checks are reported as skipped).
  --allow-unexercised IDS    Comma-separated operationIds that may stay unexercised without failing
                             the run: those that need a third party this server cannot reach (CI
                             allows connectConnector and importIssues: GitHub). * allows any. Names
                             the contract does not have are a usage error.
  --request-timeout SECONDS  How long to wait for each answer (default 30); a call with no answer
                             in time, or whose connection closed unanswered, is a violation.
  --json                     Print the whole report as one JSON object instead of text.
  --help                     This text.`;

async function main(): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        'base-url': { type: 'string' },
        token: { type: 'string' },
        api: { type: 'string' },
        'limited-token': { type: 'string' },
        'allow-unexercised': { type: 'string' },
        'request-timeout': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${HELP}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const api = (values.api ?? 'work-platform') as string;
  if (typeof values['base-url'] !== 'string' || typeof values.token !== 'string' || (api !== 'work-platform' && api !== 'portfolio')) {
    process.stderr.write(`--base-url and --token are required, and --api is work-platform or portfolio.\n\n${HELP}\n`);
    return 2;
  }
  const timeoutSeconds = values['request-timeout'] === undefined ? 30 : Number(values['request-timeout']);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
    process.stderr.write(`--request-timeout is a number of seconds above 0.\n\n${HELP}\n`);
    return 2;
  }
  const allowUnexercised = typeof values['allow-unexercised'] === 'string' ? values['allow-unexercised'].split(',').map((name) => name.trim()).filter(Boolean) : [];
  let done = 0;
  const report = await runConformance({
    baseUrl: values['base-url'],
    token: values.token,
    api: api as ApiName,
    limitedToken: typeof values['limited-token'] === 'string' ? values['limited-token'] : undefined,
    allowUnexercised,
    requestTimeoutMs: timeoutSeconds * 1000,
    onWait: (seconds, request) => process.stderr.write(`429 on ${request}: waiting ${seconds} s (Retry-After) before trying again\n`),
    onResult: () => {
      done += 1;
      if (!values.json && process.stderr.isTTY && done % 25 === 0) process.stderr.write(`\r${done} checks…`);
    },
  });
  if (!values.json && process.stderr.isTTY) process.stderr.write('\r');
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`);
  return report.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`conformance: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
