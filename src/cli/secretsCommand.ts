// `admin secrets`: new values for every secret the server processes of one deployment must share,
// as environment lines. One host keeps them in its data directory; several hosts (DATABASE_URL)
// must be given the same ones, and this is where an operator gets them.
import type { Command } from './cliCommand.js';

// Loaded only when the command runs, so that --help answers at once.
const modules = {
  config: () => import('../config.js'),
  secrets: () => import('../auth/serverSecrets.js'),
};

export const secretsCommand: Command = {
  path: ['secrets'],
  usage: 'secrets',
  summary: 'Print new values of the secrets every server and worker of a deployment shares, as NAME=value lines.',
  help: [
    'Generates a new value for each secret every server and worker process of one deployment must',
    'share, and prints them as environment lines to keep in a file the processes read (never in the',
    'repository):   npm run --silent admin -- secrets > .env',
    'On one host the server generates them into its data directory by itself. With DATABASE_URL',
    '(several hosts) the server refuses to start until every one of them is set in the environment.',
    'Nothing is stored: each run prints new values. Replacing WEBHOOK_SECRET_KEY later makes the stored',
    'webhook signing secrets unreadable, and replacing the others signs out sessions and voids cursors and',
    'authorizations in progress: rotate the first three instead (keys rotate --help, docs/operations.md "Key rotation").',
    'JSON: {"<NAME>": "<value>", …}.',
  ].join('\n'),
  options: {},
  positionals: 0,
  async run(context) {
    const [{ sharedSecretNames }, { generateSecret, generateSigningJwk }] = await Promise.all([modules.config(), modules.secrets()]);
    const values = Object.fromEntries(sharedSecretNames.map((name) => [name, name === 'OAUTH_SIGNING_JWK' ? generateSigningJwk(context.now) : generateSecret()]));
    // Single-quoted: the JWK's JSON holds double quotes, and a shell or a compose env_file reads it whole.
    const text = Object.entries(values)
      .map(([name, value]) => `${name}='${value}'`)
      .join('\n');
    return { json: values, text };
  },
};
