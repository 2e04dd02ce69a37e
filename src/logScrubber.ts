// What keeps secrets and personal data out of free text before it becomes a log field: upstream
// error bodies (GitHub's, the AI provider's), error messages and stacks. pino's `redact` removes
// members by path; it cannot see inside a sentence, so every string the logger writes also passes
// through `scrubText`, and a caller that holds the exact credential it sent (a connector's
// decrypted token, the AI provider's key) passes it as a known secret, whatever its shape.

/** What a removed value is replaced with. */
export const REDACTED = '[redacted]';
/** What an email address is replaced with: personal data, never a secret, but never logged either. */
export const REDACTED_EMAIL = '[email]';

const TOKEN_CHARACTERS = 'A-Za-z0-9_\\-';
const notAfterToken = `(?<![${TOKEN_CHARACTERS}])`;
const notBeforeToken = `(?![${TOKEN_CHARACTERS}])`;

/**
 * The credential shapes the server mints or receives, in the order they are tried. Pairs and
 * schemes go first so that `token=ghp_…` loses its whole value, not only the part a shape knows.
 */
const SECRET_PATTERNS: readonly RegExp[] = [
  // `Bearer …` and `Basic …` wherever they appear (headers echoed in a body, `key=Bearer sk-…`).
  /\b(Bearer|Basic)(\s+|%20|\+)[A-Za-z0-9._~+/=:%-]+/gi,
  // `token=…`, `"password": "…"` (also JSON-escaped, inside a quoted body), `api_key: …`, `client_secret=…`:
  // the value of anything named like a secret.
  /(\b(?:[a-z0-9_-]*?(?:token|secret|password|passwd|pwd|api[_-]?key|apikey|access[_-]?key|key|credential|authorization|auth|cookie|signature|sig))\b(?:\\?["'])?\s*(?:=|:)\s*(?:\\?["'])?)([^\s"'&,;}{[\]<>\\]+)/gi,
  // The password of a URL's user information (`redis://user:…@host`), unless it is already masked (`***`).
  /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)(?!\*+@)([^\s/@]+)(?=@)/gi,
  // Our own shapes: portfolio API keys, PATs, OAuth client secrets, webhook signing secrets.
  new RegExp(`(?:pfk_|svc_pat_|svc_ocs_|whsec_)[${TOKEN_CHARACTERS}]+`, 'g'),
  // GitHub's token shapes (classic, OAuth, user-to-server, server-to-server, refresh, fine-grained).
  new RegExp(`\\b(?:gh[pousr]_|github_pat_)[${TOKEN_CHARACTERS}]+`, 'g'),
  // OpenAI-style provider keys (`sk-…`, `sk-proj-…`).
  new RegExp(`${notAfterToken}sk-[${TOKEN_CHARACTERS}]{8,}`, 'g'),
  // JSON Web Tokens (session tokens): three base64url parts, the first two JSON objects.
  /\beyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g,
  // Opaque OAuth tokens and codes: exactly 43 base64url characters standing alone.
  new RegExp(`${notAfterToken}[${TOKEN_CHARACTERS}]{43}${notBeforeToken}`, 'g'),
];

/**
 * One test for all the shapes (case-insensitive, so it matches whatever any of them matches): most
 * strings of a line (ids, paths, methods) hold none, and then one pass answers instead of eight.
 */
const ANY_SECRET_PATTERN = new RegExp(SECRET_PATTERNS.map((pattern) => `(?:${pattern.source})`).join('|'), 'i');

// The domain ends in letters: `user:***@127.0.0.1` (a masked URL) is not an address.
const EMAIL_PATTERN = /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/g;

/** Known secrets shorter than this are not replaced by value: a 3-character "secret" would eat ordinary words. */
const MIN_KNOWN_SECRET_LENGTH = 6;

/** `text` without any credential shape, any email address, or any of `knownSecrets` (and their URL-encoded forms). */
export function scrubText(text: string, knownSecrets: readonly (string | undefined | null)[] = []): string {
  let scrubbed = text;
  for (const secret of knownSecrets) {
    if (!secret || secret.length < MIN_KNOWN_SECRET_LENGTH) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) scrubbed = scrubbed.split(form).join(REDACTED);
  }
  if (!ANY_SECRET_PATTERN.test(scrubbed)) return scrubbed.includes('@') ? scrubbed.replace(EMAIL_PATTERN, REDACTED_EMAIL) : scrubbed;
  for (const pattern of SECRET_PATTERNS) {
    scrubbed = scrubbed.replace(pattern, (match, ...groups: unknown[]) => {
      // The pair pattern keeps the name (`token=`) and drops the value.
      if (pattern === SECRET_PATTERNS[1]) return `${String(groups[0])}${REDACTED}`;
      if (pattern === SECRET_PATTERNS[0]) return `${String(groups[0])} ${REDACTED}`;
      if (pattern === SECRET_PATTERNS[2]) return `${String(groups[0])}${REDACTED}`;
      return match === REDACTED ? match : REDACTED;
    });
  }
  return scrubbed.includes('@') ? scrubbed.replace(EMAIL_PATTERN, REDACTED_EMAIL) : scrubbed;
}

/** Member names whose value is never logged, whatever it looks like (compared in lower case, without `-` and `_`). */
const SECRET_MEMBER_NAMES = new Set([
  'authorization', 'proxyauthorization', 'cookie', 'setcookie', 'token', 'accesstoken', 'refreshtoken', 'idtoken', 'password',
  'secret', 'clientsecret', 'signingsecret', 'apikey', 'key', 'credential', 'sealedcredential', 'codeverifier',
]);
/** Member names whose value is personal data or a customer's content: logged as `[redacted]`, their ids stay. */
const PERSONAL_MEMBER_NAMES = new Set(['email', 'contactemail', 'displayname', 'body', 'requestbody', 'description', 'notes', 'content', 'prompt', 'messages']);

function normalizedName(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, '');
}

/** Whether a member of a log line is removed by its name alone. */
export function isRedactedMemberName(name: string): boolean {
  const normalized = normalizedName(name);
  return SECRET_MEMBER_NAMES.has(normalized) || PERSONAL_MEMBER_NAMES.has(normalized);
}

const MAX_DEPTH = 6;

/**
 * A log field made safe to write: errors become `{name, message, stack, cause}`, every string is
 * scrubbed, members named like secrets or personal data are replaced, at any depth.
 */
export function scrubValue(value: unknown, knownSecrets: readonly string[] = [], depth = 0): unknown {
  if (typeof value === 'string') return scrubText(value, knownSecrets);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (value instanceof Error) {
    const error: Record<string, unknown> = { name: value.name, message: scrubText(value.message, knownSecrets) };
    if (value.stack) error.stack = scrubText(value.stack, knownSecrets);
    const code = (value as { code?: unknown }).code;
    if (typeof code === 'string' || typeof code === 'number') error.code = code;
    if (value.cause !== undefined) error.cause = scrubValue(value.cause, knownSecrets, depth + 1);
    return error;
  }
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, knownSecrets, depth + 1));
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  const out: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value as Record<string, unknown>)) {
    out[name] = isRedactedMemberName(name) && member !== undefined && member !== null ? REDACTED : scrubValue(member, knownSecrets, depth + 1);
  }
  return out;
}
