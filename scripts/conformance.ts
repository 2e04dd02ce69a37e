// npm run conformance -- --base-url URL --token TOKEN [--api work-platform|portfolio] [--limited-token TOKEN] [--json]
import { parseArgs } from 'node:util';
import { formatReport, runConformance, type ApiName } from './conformance/conformanceRun.js';

const HELP = `Usage: npm run --silent conformance -- --base-url URL --token TOKEN [options]

Walks every operation of a live server's contract (its served openapi.json) and checks every
answer against it: no server error, a declared status, content type, headers and body; and the
refusals the contract promises: no or a bad credential 401, a token without the scopes 403, an
undeclared method 405 with Allow, a malformed parameter or body 400/422, a deleted resource 404.
It creates, changes and deletes data: point it at a test deployment. Exits 1 on any violation.

Options:
  --base-url URL         The server, e.g. http://localhost:3000 (required).
  --token TOKEN          A credential with every scope: a Personal Access Token (work-platform) or an
                         API key (portfolio) (required).
  --api NAME             work-platform (default) or portfolio.
  --limited-token TOKEN  A token of the same workspace without scopes, to check the 403s
                         (without it those checks are reported as skipped).
  --json                 Print the whole report as one JSON object instead of text.
  --help                 This text.`;

async function main(): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: { 'base-url': { type: 'string' }, token: { type: 'string' }, api: { type: 'string' }, 'limited-token': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' } },
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
  let done = 0;
  const report = await runConformance({
    baseUrl: values['base-url'],
    token: values.token,
    api: api as ApiName,
    limitedToken: typeof values['limited-token'] === 'string' ? values['limited-token'] : undefined,
    onWait: (seconds, request) => process.stderr.write(`429 on ${request}: waiting ${seconds} s (Retry-After) before trying again\n`),
    onResult: () => {
      done += 1;
      if (!values.json && process.stderr.isTTY && done % 25 === 0) process.stderr.write(`\r${done} checks…`);
    },
  });
  if (!values.json && process.stderr.isTTY) process.stderr.write('\r');
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`);
  return report.violations === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`conformance: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
