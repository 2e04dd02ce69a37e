// A webhook receiver for local development, and the receiver example of docs/webhooks.md in runnable form:
// it reads the raw body, verifies Svc-Signature, skips event ids it has already processed, and
// prints each event on one line.
//
//   npm run webhook:receiver -- --secret whsec_… [--secret whsec_…] [--port 4000]
//
// Point a subscription at it with WEBHOOK_ALLOW_LOOPBACK=on on the server:
//   http://127.0.0.1:4000/hooks/work-platform
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import express, { type Express } from 'express';
import { createEventIdDedupe } from '../src/webhooks/eventIdDedupe.js';
import { verifyWebhook, WebhookVerificationError, type WebhookEnvelope } from '../src/webhooks/verifyWebhook.js';

export interface WebhookReceiverOptions {
  /** Every secret that may sign (both during a rotation's overlap). */
  secrets: string[];
  /** Called once per event id; a throw answers 500 so the sender retries. */
  onEvent(event: WebhookEnvelope): void;
  /** Called for refused deliveries, with the verifier's reason. */
  onRefused?(reason: string): void;
  now?: () => number;
}

export const RECEIVER_PATH = '/hooks/work-platform';

export function createWebhookReceiver({ secrets, onEvent, onRefused = () => {}, now = Date.now }: WebhookReceiverOptions): Express {
  const dedupe = createEventIdDedupe({ now });
  const app = express();
  app.post(RECEIVER_PATH, express.raw({ type: 'application/json', limit: '64kb' }), (req, res) => {
    let event: WebhookEnvelope;
    try {
      event = verifyWebhook(req.body as Buffer, req.headers, secrets, { now });
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      onRefused(error.reason);
      res.status(400).json({ error: error.reason });
      return;
    }
    if (dedupe.firstTime(event.id)) {
      try {
        onEvent(event);
      } catch (error) {
        void dedupe.forget(event.id);
        throw error;
      }
    }
    res.sendStatus(204);
  });
  return app;
}

const HELP = `Usage: npm run webhook:receiver -- --secret <whsec_…> [--secret <whsec_…>] [--port 4000]

Listens on http://127.0.0.1:<port>${RECEIVER_PATH}, verifies each delivery's Svc-Signature with the
given signing secrets (pass the old and the new one during a rotation), skips event ids already
processed, and prints one line per event. Answers 204, or 400 when a delivery does not verify.
The server must run with WEBHOOK_ALLOW_LOOPBACK=on to deliver to a loopback address.

Options:
  --secret <whsec_…>   a signing secret (repeatable); default: $WEBHOOK_SECRET
  --port <n>           port to listen on (default 4000; 0 picks a free one)
  --help               this text
`;

function main(): void {
  const { values } = parseArgs({
    options: { secret: { type: 'string', multiple: true }, port: { type: 'string', default: '4000' }, help: { type: 'boolean' } },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const secrets = values.secret ?? (process.env.WEBHOOK_SECRET ? [process.env.WEBHOOK_SECRET] : []);
  const port = Number(values.port);
  if (secrets.length === 0 || !Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`${secrets.length === 0 ? 'Give at least one --secret.' : `--port must be 0–65535, got "${values.port}".`}\n\n${HELP}`);
    process.exit(2);
  }
  const app = createWebhookReceiver({
    secrets,
    onEvent: (event) => process.stdout.write(`${event.createdAt} ${event.type} ${event.id} ${JSON.stringify(event.data.object)}\n`),
    onRefused: (reason) => process.stdout.write(`refused a delivery: ${reason}\n`),
  });
  const server = app.listen(port, '127.0.0.1', () => {
    const address = server.address();
    const actualPort = typeof address === 'object' && address ? address.port : port;
    process.stdout.write(`Webhook receiver listening on http://127.0.0.1:${actualPort}${RECEIVER_PATH} (Ctrl-C stops it)\n`);
  });
  process.once('SIGINT', () => server.close(() => process.exit(0)));
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
