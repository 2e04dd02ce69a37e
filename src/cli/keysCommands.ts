// `admin keys …`: the rotatable keys (src/auth/keyRings.ts). `rotate` adds a newest key, `reseal`
// seals every stored sealed value again with the newest sealing key, `retire` removes a replaced
// key once nothing needs it, `list` shows the keys and what each one sealed. Running servers and
// workers notice a changed key file within a second; keys given in the environment change only
// when the processes are restarted with the new value (docs/operations.md, "Key rotation").
import { dirname, join } from 'node:path';
import { CliError, iso, type Command, type CommandContext } from './cliCommand.js';
import type { KeyRing, RotatableKeyName, RingKey } from '../auth/keyRings.js';

// Loaded only when a command runs, so that --help answers at once.
const modules = {
  keyRings: () => import('../auth/keyRings.js'),
  signingKeys: () => import('../auth/oauth/signingKeys.js'),
  secretBox: () => import('../auth/secretBox.js'),
  sealedColumns: () => import('../store/sealedColumns.js'),
  sealedValues: () => import('./sealedValues.js'),
  config: () => import('../config.js'),
};

type KeyName = RotatableKeyName | 'oauth-signing';
const names = ['sealing', 'session', 'cursor', 'oauth-cookies', 'oauth-signing'] as const satisfies readonly KeyName[];
const defaultBatchSize = 200;

function parseNames(positionals: string[]): KeyName[] {
  for (const name of positionals) {
    if (!(names as readonly string[]).includes(name)) throw new CliError(`Unknown key "${name}": one of ${names.join(', ')}.`);
  }
  return positionals.length === 0 ? [...names] : [...new Set(positionals as KeyName[])];
}

interface ListedKey {
  id: string;
  addedAt: number | undefined;
}

/** One rotatable key as the commands see it: its list of keys, and that list's text with one more or one fewer. */
interface KeySource {
  name: KeyName;
  variable: string;
  /** The key file, when the environment variable is unset. */
  file: string | undefined;
  /** Oldest first; the last is the newest. */
  keys: readonly ListedKey[];
  /** The list's text with a new newest key (for the file, or the variable). */
  withNewKey(now: number): { id: string; text: string };
  without(id: string): string;
}

async function keySource(context: CommandContext, name: KeyName): Promise<KeySource> {
  const environmentValue = (variable: string) => (context.env[variable]?.trim() ? context.env[variable] : undefined);
  const dataDirectory = dirname(context.databasePath);
  try {
    if (name === 'oauth-signing') {
      const { loadSigningKeys, signingKeyVariable, signingKeyFileName, formatSigningKeys, newSigningKey } = await modules.signingKeys();
      const envValue = environmentValue(signingKeyVariable);
      const file = envValue ? undefined : join(dataDirectory, signingKeyFileName);
      const keys = loadSigningKeys(envValue, file ?? '').keys();
      return {
        name,
        variable: signingKeyVariable,
        file,
        // generateSigningJwk names a key after the time it was made: es256-<epoch ms, base 36>.
        keys: keys.map((key) => ({ id: key.kid, addedAt: /^es256-([0-9a-z]{6,})$/.test(key.kid) ? parseInt(key.kid.slice(6), 36) : undefined })),
        withNewKey(now) {
          const added = newSigningKey(keys, now);
          return { id: added.kid, text: formatSigningKeys([...keys, added]) };
        },
        without: (id) => formatSigningKeys(keys.filter((key) => key.kid !== id)),
      };
    }
    const { newRingKey, formatKeyList } = await modules.keyRings();
    const { variable, file, ring } = await ringSource(context, name);
    const keys: readonly RingKey[] = ring.keys();
    return {
      name,
      variable,
      file,
      keys,
      withNewKey(now) {
        const added = newRingKey(keys, now);
        return { id: added.id, text: formatKeyList([...keys, added]) };
      },
      without: (id) => formatKeyList(keys.filter((key) => key.id !== id)),
    };
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
}

/** A key ring as the server loads it: its environment variable when set, else its file beside DATABASE_PATH. */
async function ringSource(context: CommandContext, name: RotatableKeyName): Promise<{ variable: string; file: string | undefined; ring: KeyRing }> {
  const { rotatableKeys, keyFilePath, loadKeyRing } = await modules.keyRings();
  const { variable } = rotatableKeys[name];
  const envValue = context.env[variable]?.trim() ? context.env[variable] : undefined;
  const file = envValue ? undefined : keyFilePath(name, dirname(context.databasePath));
  try {
    return { variable, file, ring: loadKeyRing(envValue, file ?? '', { name: variable }) };
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
}

/** What a replaced key still verifies during its grace period. */
const graceUse: Partial<Record<KeyName, string>> = { session: 'sessions', cursor: 'cursors', 'oauth-cookies': 'OAuth cookies and consent forms' };

const keyJson = (key: ListedKey, newest: ListedKey) => ({ id: key.id, addedAt: iso(key.addedAt ?? null), newest: key === newest });

/** Sealed values per column and key id. */
async function countByKeyId(context: CommandContext): Promise<Record<string, Record<string, number>>> {
  const { countSealedByKeyId } = await modules.sealedValues();
  return countSealedByKeyId(await context.db());
}

export const keysCommands: Command[] = [
  {
    path: ['keys', 'list'],
    usage: 'keys list',
    summary: 'List the rotatable keys (ids, never the keys) and how many stored values each sealing key sealed.',
    help: [
      'Lists the sealing key (WEBHOOK_SECRET_KEY), the session key (SESSION_JWT_SECRET), the cursor key',
      '(CURSOR_SECRET), the OAuth cookie key (OAUTH_COOKIE_SECRET) and the OAuth signing keys',
      '(OAUTH_SIGNING_JWK): where each comes from (the environment variable, else its file beside',
      'DATABASE_PATH), its key ids oldest first and which one is the newest (signs and seals), and',
      'for the sealing key how many stored values each key id sealed, per column.',
      'JSON: {"keys": {"<name>": {"source", "keys": [{"id", "addedAt", "newest"}]}}, "sealed": {"<table.column>": {"<key id>": <count>}}}.',
    ].join('\n'),
    options: {},
    positionals: 0,
    async run(context) {
      const keys: Record<string, unknown> = {};
      const lines: string[] = [];
      for (const name of names) {
        const source = await keySource(context, name);
        const list = source.keys;
        const newest = list.at(-1)!;
        keys[name] = { source: source.file ?? source.variable, keys: list.map((key) => keyJson(key, newest)) };
        lines.push(`${name} (${source.file ?? source.variable}):`);
        for (const key of list) lines.push(`  ${key.id.padEnd(6)} added ${iso(key.addedAt ?? null) ?? 'at an unknown time'}${key === newest ? '  newest' : ''}`);
      }
      const sealed = await countByKeyId(context);
      lines.push('sealed values by key id:');
      for (const [column, perKey] of Object.entries(sealed)) {
        const counts = Object.entries(perKey).map(([id, count]) => `${id}: ${count}`).join(', ');
        lines.push(`  ${column.padEnd(45)} ${counts || 'none'}`);
      }
      return { json: { keys, sealed }, text: lines.join('\n') };
    },
  },
  {
    path: ['keys', 'rotate'],
    usage: 'keys rotate [sealing] [session] [cursor] [oauth-cookies] [oauth-signing]',
    summary: 'Add a new newest key to each named key (all of them by default).',
    help: [
      'Adds a new random key, with the next id (k1, k2, …) and the time, as the newest of each named key:',
      '  sealing   WEBHOOK_SECRET_KEY / webhook-secrets.key: seals webhook signing secrets, connector',
      '            credentials and stored idempotent answers; every listed key still opens what it sealed.',
      '  session   SESSION_JWT_SECRET / session-jwt.key: signs session tokens; the replaced key still',
      '            verifies for PREVIOUS_KEY_GRACE_SECONDS (default a day).',
      '  cursor    CURSOR_SECRET / cursor.key: signs list cursors; the same grace period.',
      '  oauth-cookies  OAUTH_COOKIE_SECRET / oauth-cookies.key: signs the OAuth authorization server\'s',
      '            cookies and consent forms; the same grace period (a cookie signed with the replaced key',
      '            is signed again with the newest on its next request).',
      '  oauth-signing  OAUTH_SIGNING_JWK / oauth-signing-key.json: the authorization server\'s ES256 keys,',
      '            published at /oauth/jwks; a new key (id es256-…) signs from then on. Nothing /v1 accepts',
      '            is signed with them, so a replaced one may be retired at once.',
      'A key file beside DATABASE_PATH is rewritten in one step (mode 0600); running servers and workers',
      'read it again within a second. A key given in the environment cannot be changed from here: the',
      'command prints the new value to set instead (every process, then restart; docs/operations.md "Key rotation").',
      'Afterwards run `keys reseal`, then `keys retire sealing <old id>`.',
      'JSON: {"rotated": [{"name", "id", "file"}], "environment": {"<VARIABLE>": "<new value>"}}.',
    ].join('\n'),
    options: {},
    positionals: 3,
    async run(context) {
      const { replaceKeyFile } = await modules.keyRings();
      const rotated: Array<{ name: string; id: string; file: string | null }> = [];
      const environment: Record<string, string> = {};
      for (const name of parseNames(context.positionals)) {
        const source = await keySource(context, name);
        const added = source.withNewKey(context.now());
        if (source.file) replaceKeyFile(source.file, added.text);
        else environment[source.variable] = added.text.replace(/\n/g, ',');
        rotated.push({ name, id: added.id, file: source.file ?? null });
      }
      const lines = rotated.map((entry) => `${entry.name}: added ${entry.id} as the newest key${entry.file ? ` in ${entry.file}` : ''}.`);
      if (Object.keys(environment).length > 0) {
        lines.push(
          '',
          'These keys come from the environment: set the new values on every server and worker, then restart them.',
          'With several hosts, first list the new key before the current one (accepted, not yet newest),',
          'restart all, then set these values and restart again (docs/operations.md "Key rotation"):',
          ...Object.entries(environment).map(([variable, value]) => `${variable}='${value}'`),
        );
      }
      lines.push('', 'Next: npm run admin -- keys reseal   (seals every stored value with the newest sealing key)');
      return { json: { rotated, environment }, text: lines.join('\n') };
    },
  },
  {
    path: ['keys', 'reseal'],
    usage: 'keys reseal [--batch-size <rows>]',
    summary: 'Seal every stored sealed value again with the newest sealing key, in batches.',
    help: [
      'Opens every value sealed with an older sealing key and seals it with the newest: webhook signing',
      'secrets (current and previous), connector credentials and stored idempotent answers. Each batch',
      '(--batch-size rows, default 200) is one transaction, so servers keep serving meanwhile; a value',
      'changed by a server during its batch is left as the server wrote it. Progress goes to stderr.',
      'Values that no listed key opens are counted as unreadable and left as they are.',
      'Passes repeat until one finds nothing to reseal (values a server sealed with the old key in the',
      'second before it saw the new one). JSON: {"keyId", "resealed": {"<table.column>": <count>}, "unreadable": {…}}.',
    ].join('\n'),
    options: { 'batch-size': { type: 'string' } },
    positionals: 0,
    async run(context) {
      const batchText = context.values['batch-size'];
      const batchSize = batchText === undefined ? defaultBatchSize : Number(batchText);
      if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) throw new CliError(`--batch-size must be an integer from 1 to 10000; got "${String(batchText)}".`);
      const [{ createSealedColumnStore, sealedColumnNames }, { createSecretBox }] = await Promise.all([modules.sealedColumns(), modules.secretBox()]);
      const { ring } = await ringSource(context, 'sealing');
      const newest = ring.newest();
      const box = createSecretBox(ring);
      const store = createSealedColumnStore(await context.db());
      const skipPrefix = `v2.${newest.id}.`;
      const resealed: Record<string, number> = Object.fromEntries(sealedColumnNames.map((column) => [column, 0]));
      const unreadable: Record<string, number> = Object.fromEntries(sealedColumnNames.map((column) => [column, 0]));
      const progress = context.progress ?? (() => undefined);
      for (let pass = 1; pass <= 5; pass += 1) {
        let resealedThisPass = 0;
        for (const column of sealedColumnNames) {
          const contextFor = await (await modules.sealedValues()).sealedValueContext(column);
          let after: string[] | undefined;
          for (;;) {
            const batch = await store.batch(column, after, batchSize, skipPrefix);
            if (batch.length === 0) break;
            const outcome = await store.write(async () => {
              let done = 0;
              let failed = 0;
              for (const value of batch) {
                let plaintext: string;
                try {
                  plaintext = box.open(value.sealed, contextFor(value.recordKey));
                } catch {
                  failed += 1;
                  continue;
                }
                if (await store.replace(value, box.seal(plaintext, contextFor(value.recordKey)))) done += 1;
              }
              return { done, failed };
            });
            resealed[column]! += outcome.done;
            unreadable[column]! += pass === 1 ? outcome.failed : 0;
            resealedThisPass += outcome.done;
            progress(`${column}: ${resealed[column]} resealed${unreadable[column] ? `, ${unreadable[column]} unreadable` : ''}\n`);
            if (batch.length < batchSize) break;
            after = batch.at(-1)!.recordKey;
          }
        }
        if (resealedThisPass === 0) break;
      }
      const unreadableTotal = Object.values(unreadable).reduce((sum, count) => sum + count, 0);
      const lines = [
        `Sealed with ${newest.id}:`,
        ...sealedColumnNames.map((column) => `  ${column.padEnd(45)} ${resealed[column]} resealed${unreadable[column] ? `, ${unreadable[column]} UNREADABLE` : ''}`),
        unreadableTotal > 0
          ? `${unreadableTotal} values open with no listed key: they stay as they are (a webhook then fails to sign, a connector asks to be reconnected).`
          : 'Every stored value is now sealed with the newest key; older sealing keys can be retired (keys retire sealing <id>).',
      ];
      return { json: { keyId: newest.id, resealed, unreadable }, text: lines.join('\n') };
    },
  },
  {
    path: ['keys', 'retire'],
    usage: 'keys retire <sealing|session|cursor|oauth-cookies|oauth-signing> <key id> [--force]',
    summary: 'Remove a replaced key from its key file, once nothing needs it.',
    help: [
      'Removes a key that is not the newest from its key file. Refused for the sealing key while any',
      'stored value is still sealed with it (run keys reseal first), and for the session, cursor and',
      'OAuth cookie keys while its grace period lasts (PREVIOUS_KEY_GRACE_SECONDS after the next key was',
      'added) unless --force: what it signed is refused from then on (an OAuth authorization in progress',
      'starts again). An OAuth signing key may be retired at once. A key given in the environment',
      'is removed by setting the variable without it. JSON: {"name", "retired", "file"}.',
    ].join('\n'),
    options: { force: { type: 'boolean' } },
    positionals: 2,
    async run(context) {
      const [nameText, keyId] = context.positionals;
      if (!nameText || !keyId) throw new CliError('Name the key and the id to retire, e.g. keys retire sealing k0.');
      const [name] = parseNames([nameText]);
      const source = await keySource(context, name!);
      const keys = source.keys;
      const index = keys.findIndex((key) => key.id === keyId);
      if (index === -1) throw new CliError(`The ${name} key has no key ${keyId} (it has ${keys.map((key) => key.id).join(', ')}).`);
      if (index === keys.length - 1) throw new CliError(`${keyId} is the newest ${name} key; rotate first, then retire it.`);
      if (!source.file) throw new CliError(`The ${name} key comes from ${source.variable}: set it without ${keyId} on every process and restart them.`);
      if (name === 'sealing') {
        const counts = await countByKeyId(context);
        const using = Object.entries(counts).filter(([, perKey]) => (perKey[keyId] ?? 0) > 0);
        if (using.length > 0) {
          throw new CliError(
            `Stored values are still sealed with ${keyId} (${using.map(([column, perKey]) => `${column}: ${perKey[keyId]}`).join(', ')}); run keys reseal first.`,
          );
        }
      } else if (graceUse[name!] && !context.values.force) {
        const { loadConfig, ConfigError } = await modules.config();
        let graceMs: number;
        try {
          graceMs = loadConfig(context.env).previousKeyGraceMs;
        } catch (error) {
          if (error instanceof ConfigError) throw new CliError(error.message);
          throw error;
        }
        const successor = keys[index + 1]!;
        if (successor.addedAt === undefined || context.now() < successor.addedAt + graceMs) {
          const until = successor.addedAt === undefined ? 'an unknown time' : iso(successor.addedAt + graceMs);
          throw new CliError(`${keyId} still verifies ${graceUse[name!]} it signed until ${until}; retire it then, or now with --force.`);
        }
      }
      const { replaceKeyFile } = await modules.keyRings();
      replaceKeyFile(source.file, source.without(keyId));
      return { json: { name, retired: keyId, file: source.file }, text: `Removed ${name} key ${keyId} from ${source.file}.` };
    },
  },
];

export const keysGroups: Record<string, string> = {
  keys: 'Rotatable keys: sealing (webhook secrets, connector credentials, stored answers), session tokens, cursors, OAuth cookies and signing keys.',
};
