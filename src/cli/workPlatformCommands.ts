// Admin CLI commands of the Work-Platform API (/v1): workspaces and their limits, users,
// session tokens and personal access tokens.
import { dirname, join } from 'node:path';
import { plans, roles } from '../../generated/work-platform/rules.js';
import { CliError, iso, parseExpiresAt, required, type Command, type CommandContext } from './cliCommand.js';
import { scopeCatalogue } from '../../generated/work-platform/rules.js';

// Store modules load only when a command runs, so that --help and usage errors answer at once.
const modules = {
  workspaces: () => import('../store/workspaces.js'),
  workspaceLimits: () => import('../limits/workspaceLimits.js'),
  users: () => import('../store/users.js'),
  personalAccessTokens: () => import('../store/personalAccessTokens.js'),
  issuePersonalAccessTokens: () => import('../auth/personalAccessTokens.js'),
  sessionTokens: () => import('../auth/sessionTokens.js'),
  keyRings: () => import('../auth/keyRings.js'),
};

/** Where the server keeps its generated session key when SESSION_JWT_SECRET is unset. */
export function sessionKeyPath(databasePath: string): string {
  return join(dirname(databasePath), 'session-jwt.key');
}

const durationUnits = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** `90s`, `30m`, `1h`, `7d` (and with a leading minus, in the past) → seconds. */
export function parseDuration(option: string, value: string, options: { allowNegative: boolean; allowBareSeconds: boolean }): number {
  const match = /^(-?)(\d{1,9})([smhd]?)$/.exec(value.trim());
  const unit = match?.[3] as keyof typeof durationUnits | '' | undefined;
  if (!match || (match[1] === '-' && !options.allowNegative) || (unit === '' && !options.allowBareSeconds)) {
    const forms = options.allowNegative ? '30m, 1h, 7d or -1h' : options.allowBareSeconds ? '30s, 2m, 1h, 1d or 45' : '30s, 2m, 1h or 1d';
    throw new CliError(`${option} takes durations like ${forms}; got "${value}".`);
  }
  return (match[1] === '-' ? -1 : 1) * Number(match[2]) * durationUnits[unit || 's'];
}

function oneOf<T extends string>(context: CommandContext, name: string, allowed: readonly T[]): T {
  const value = required(context, name);
  if (!(allowed as readonly string[]).includes(value)) throw new CliError(`--${name} must be one of ${allowed.join(', ')}; got "${value}".`);
  return value as T;
}

function wholeNumber(context: CommandContext, name: string): number | undefined {
  const value = context.values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,13}$/.test(value)) throw new CliError(`--${name} must be a whole number; got "${String(value)}".`);
  return Number(value);
}

function positional(context: CommandContext, what: string): string {
  const value = context.positionals[0];
  if (!value) throw new CliError(`Missing the id of the ${what}.`);
  return value;
}

async function limitsOutput(workspace: import('../store/workspaces.js').Workspace) {
  const { effectiveLimits, rateLimitTier } = await modules.workspaceLimits();
  const limits = effectiveLimits(workspace);
  const show = (value: unknown) => (value === null ? 'uncapped' : Array.isArray(value) ? value.join(',') : String(value));
  const rows = Object.entries(limits).map(
    ([name, entry]) =>
      `  ${name.padEnd(26)}${show(entry.inForce).padEnd(34)}plan ${show(entry.planDefault)}${entry.override === null ? '' : '  (override)'}`,
  );
  return {
    json: { id: workspace.id, plan: workspace.plan, tier: rateLimitTier(workspace.plan), limits },
    text: [`Limits of ${workspace.id} (plan ${workspace.plan}, tier ${rateLimitTier(workspace.plan)}):`, ...rows].join('\n'),
  };
}

export const workPlatformGroups: Record<string, string> = {
  workspace: 'Workspaces: the tenants of the Work-Platform API (/v1), each on a plan, with optional limit overrides.',
  user: 'Users of a workspace, each with a role (owner, admin or member).',
  session: 'Session tokens (JWT, HS256) of the Work-Platform API: every scope, the user\'s role.',
  pat: 'Personal access tokens (svc_pat_…) of the Work-Platform API: scope-bounded, stored only as hashes.',
};

export const workPlatformCommands: Command[] = [
  {
    path: ['workspace', 'create'],
    usage: `workspace create --name <name> --plan ${plans.join('|')}`,
    summary: 'Create a Work-Platform workspace.',
    help: [
      'Creates a workspace and prints its id (ten_…). The plan sets the default rate limits',
      '(free; pro, team and business; enterprise), the monthly quota and the daily AI spend cap.',
      'JSON: {"id"}.',
    ].join('\n'),
    options: { name: { type: 'string' }, plan: { type: 'string' } },
    positionals: 0,
    async run(context) {
      const name = required(context, 'name');
      const plan = oneOf(context, 'plan', plans);
      const { createWorkspaceStore } = await modules.workspaces();
      const { id } = await createWorkspaceStore(await context.db(), { now: context.now }).createWorkspace({ name, plan });
      return { json: { id }, text: `Created workspace ${id} on plan ${plan}.` };
    },
  },
  {
    path: ['workspace', 'limits', 'show'],
    usage: 'workspace limits show <workspace id>',
    summary: 'Show a workspace\'s limits: in force, plan default and override.',
    help: 'Prints, per value, what is in force, the plan\'s default and the workspace\'s override (null when none). JSON: {"id", "plan", "tier", "limits": {<name>: {"inForce", "planDefault", "override"}}}.',
    options: {},
    positionals: 1,
    async run(context) {
      const id = positional(context, 'workspace (ten_…)');
      const { createWorkspaceStore } = await modules.workspaces();
      const workspace = await createWorkspaceStore(await context.db()).getWorkspace(id);
      if (!workspace) throw new CliError(`No workspace with id "${id}".`);
      return limitsOutput(workspace);
    },
  },
  {
    path: ['workspace', 'limits', 'set'],
    usage:
      'workspace limits set <workspace id> [--read N] [--write N] [--ai N] [--monthly-quota N] [--ai-daily-spend-cap N] [--webhook-retry-delays 30s,2m,…] | --clear',
    summary: 'Override a workspace\'s plan limits, or drop every override with --clear.',
    help: [
      'Sets the given overrides and keeps the others; --clear drops every override so that the plan\'s',
      'values apply again. Prints the limits afterwards, as `workspace limits show` does.',
      '',
      '  --read, --write, --ai     requests per minute in that rate-limit class (1 to 1000000)',
      '  --monthly-quota           personal-access-token calls per UTC calendar month (0 refuses all)',
      '  --ai-daily-spend-cap      US cents of AI spend per UTC day',
      '  --webhook-retry-delays    delays before each webhook retry, e.g. 30s,2m,10m,1h (1 to 20 of them)',
      '  --clear                   drop every override (cannot be combined with the others)',
      '',
      'JSON: {"id", "plan", "tier", "limits": {<name>: {"inForce", "planDefault", "override"}}}.',
    ].join('\n'),
    options: {
      read: { type: 'string' },
      write: { type: 'string' },
      ai: { type: 'string' },
      'monthly-quota': { type: 'string' },
      'ai-daily-spend-cap': { type: 'string' },
      'webhook-retry-delays': { type: 'string' },
      clear: { type: 'boolean' },
    },
    positionals: 1,
    async run(context) {
      const id = positional(context, 'workspace (ten_…)');
      const delays = context.values['webhook-retry-delays'];
      const overrides = {
        readPerMinute: wholeNumber(context, 'read'),
        writePerMinute: wholeNumber(context, 'write'),
        aiPerMinute: wholeNumber(context, 'ai'),
        monthlyQuota: wholeNumber(context, 'monthly-quota'),
        aiDailySpendCapCents: wholeNumber(context, 'ai-daily-spend-cap'),
        webhookRetryDelaysSeconds:
          typeof delays === 'string'
            ? delays.split(',').map((delay) => parseDuration('--webhook-retry-delays', delay, { allowNegative: false, allowBareSeconds: true }))
            : undefined,
      };
      const given = Object.values(overrides).some((value) => value !== undefined);
      if (context.values.clear === true && given) throw new CliError('--clear drops every override; do not combine it with values.');
      if (context.values.clear !== true && !given) throw new CliError('Give at least one limit to set, or --clear (run with --help for the list).');
      const { createWorkspaceStore } = await modules.workspaces();
      const store = createWorkspaceStore(await context.db());
      return limitsOutput(await (context.values.clear === true ? store.clearWorkspaceLimits(id) : store.setWorkspaceLimits(id, overrides)));
    },
  },
  {
    path: ['user', 'create'],
    usage: 'user create --workspace <workspace id> --role owner|admin|member [--name <name>] [--email <address>]',
    summary: 'Create a user in a workspace.',
    help: 'Creates a user with a role and prints its id (usr_…). The role bounds what the user\'s tokens may do (x-role-scopes of the contract): a member may not read the workspace\'s limits or manage webhooks and connectors. JSON: {"id"}.',
    options: { workspace: { type: 'string' }, role: { type: 'string' }, name: { type: 'string' }, email: { type: 'string' } },
    positionals: 0,
    async run(context) {
      const workspaceId = required(context, 'workspace');
      const role = oneOf(context, 'role', roles);
      const { createUserStore } = await modules.users();
      const { id } = await createUserStore(await context.db(), { now: context.now }).createUser({
        workspaceId,
        role,
        name: typeof context.values.name === 'string' ? context.values.name : null,
        email: typeof context.values.email === 'string' ? context.values.email : null,
      });
      return { json: { id }, text: `Created ${role} ${id} in workspace ${workspaceId}.` };
    },
  },
  {
    path: ['user', 'set-role'],
    usage: 'user set-role <user id> --role owner|admin|member',
    summary: "Change a user's role.",
    help: [
      "Gives the user another role at once, on every server process. The role bounds every token of the",
      "user (x-role-scopes of the contract): its personal access tokens and OAuth tokens keep their scopes",
      "but act, from the next request, only with those the new role holds; its sessions carry the new",
      'role\'s scopes. A demoted admin\'s token with webhooks:manage is refused 403 insufficient-role on',
      'webhook calls; promoting the user back gives the token its scopes again. JSON: {"id", "workspaceId", "role", "previousRole"}.',
    ].join('\n'),
    options: { role: { type: 'string' } },
    positionals: 1,
    async run(context) {
      const id = positional(context, 'user whose role to change (usr_…)');
      const role = oneOf(context, 'role', roles);
      const { createUserStore } = await modules.users();
      const changed = await createUserStore(await context.db(), { now: context.now }).setUserRole(id, role);
      return { json: changed, text: `${id} of workspace ${changed.workspaceId} is now ${role} (was ${changed.previousRole}).` };
    },
  },
  {
    path: ['user', 'delete'],
    usage: 'user delete <user id>',
    summary: 'Remove a user from its workspace, with its tokens.',
    help: [
      'Deletes the user with its personal access tokens and every OAuth token, code and grant issued',
      'for it, in one transaction: its session tokens, personal access tokens and OAuth tokens answer',
      '401 at once, on every server process. Refused while tasks are assigned to the user (assign',
      'them to someone else first). Webhook subscriptions and connectors the user created keep working',
      'and show creatorRemoved: true in the API, for an administrator to review: the command lists them,',
      'and so do GET /v1/webhooks?creatorRemoved=true and GET /v1/connectors?creatorRemoved=true.',
      'JSON: {"id", "workspaceId", "flagged": {"webhooks": [ids], "connectors": [ids]}}.',
    ].join('\n'),
    options: {},
    positionals: 1,
    async run(context) {
      const id = positional(context, 'user to delete (usr_…)');
      const { createUserStore } = await modules.users();
      const deleted = await createUserStore(await context.db(), { now: context.now }).deleteUser(id);
      const { webhooks, connectors } = deleted.flagged;
      const lines = [`Deleted user ${id} from workspace ${deleted.workspaceId}, with its tokens.`];
      if (webhooks.length + connectors.length > 0) {
        lines.push(
          'It created these, which keep working and are now flagged creatorRemoved for an owner or admin to keep or delete:',
          ...webhooks.map((webhookId) => `  webhook subscription ${webhookId}`),
          ...connectors.map((connectorId) => `  connector ${connectorId}`),
          'Review them in the API: GET /v1/webhooks?creatorRemoved=true, GET /v1/connectors?creatorRemoved=true.',
        );
      }
      return { json: deleted, text: lines.join('\n') };
    },
  },
  {
    path: ['session', 'create'],
    usage: 'session create --user <user id> [--expires-in 1h|30m|7d|-1h]',
    summary: 'Mint a session token (JWT) for a user.',
    help: [
      'Signs a session token for the user, valid for --expires-in (default 1h, at most 24h: the server',
      'refuses longer-lived tokens). A negative value (e.g. -1h) mints a token that has already',
      'expired, for testing token-expired answers.',
      'The key is SESSION_JWT_SECRET when set, else the session-jwt.key file beside DATABASE_PATH',
      '(created on first use), exactly as the server finds it. JSON: {"token"}.',
    ].join('\n'),
    options: { user: { type: 'string' }, 'expires-in': { type: 'string' } },
    positionals: 0,
    async run(context) {
      const userId = required(context, 'user');
      const expiresIn = context.values['expires-in'];
      const lifetimeSeconds =
        typeof expiresIn === 'string' ? parseDuration('--expires-in', expiresIn, { allowNegative: true, allowBareSeconds: false }) : undefined;
      const [{ createUserStore }, sessions, { loadKeyRing }] = await Promise.all([modules.users(), modules.sessionTokens(), modules.keyRings()]);
      const user = await createUserStore(await context.db()).getUser(userId);
      if (!user) throw new CliError(`No user with id "${userId}".`);
      // On PostgreSQL the servers take the key from the environment only (requireSharedSecrets): a key made here would sign tokens they refuse.
      if (context.env.DATABASE_URL && !context.env.SESSION_JWT_SECRET?.trim()) {
        throw new CliError('DATABASE_URL is set: give this command the SESSION_JWT_SECRET the servers share, or the token it mints would be refused.');
      }
      // Signed with the newest key, as the server signs.
      const secret = loadKeyRing(context.env.SESSION_JWT_SECRET, sessionKeyPath(context.databasePath), { name: 'SESSION_JWT_SECRET' }).newest();
      const now = context.now();
      const lifetime = lifetimeSeconds ?? sessions.defaultSessionLifetimeSeconds;
      if (lifetime > sessions.maximumSessionLifetimeSeconds) {
        throw new CliError(`--expires-in must be at most ${sessions.maximumSessionLifetimeSeconds / 3600}h: the server refuses session tokens that live longer.`);
      }
      const token = sessions.issueSessionToken(secret, { userId, workspaceId: user.workspaceId, lifetimeSeconds: lifetime, now });
      const expiresAt = iso((Math.floor(now / 1000) + lifetime) * 1000);
      return {
        json: { token },
        text: [
          `Session token for ${userId} (${user.role} of ${user.workspaceId}), ${lifetime < 0 ? 'already expired at' : 'expires'} ${expiresAt}:`,
          '',
          `  ${token}`,
          '',
          'Use it as: Authorization: Bearer <token>',
        ].join('\n'),
      };
    },
  },
  {
    path: ['session', 'revoke'],
    usage: 'session revoke --user <user id>',
    summary: "Revoke every session token of a user issued until now.",
    help: [
      'Every session token of the user issued up to this second stops working at once, on every',
      'server process (the time is stored with the user). Tokens minted later work. Personal access',
      'tokens are not affected (pat revoke). JSON: {"id", "sessionsValidAfter"}.',
    ].join('\n'),
    options: { user: { type: 'string' } },
    positionals: 0,
    async run(context) {
      const userId = required(context, 'user');
      const { createUserStore } = await modules.users();
      const { sessionsValidAfter } = await createUserStore(await context.db(), { now: context.now }).revokeSessions(userId);
      return {
        json: { id: userId, sessionsValidAfter: iso(sessionsValidAfter) },
        text: `Revoked the sessions of ${userId}: tokens issued before ${iso(sessionsValidAfter)} are refused.`,
      };
    },
  },
  {
    path: ['pat', 'create'],
    usage: 'pat create --workspace <workspace id> --user <user id> --scopes <scope,scope,…> [--expires-at <ISO 8601>]',
    summary: 'Create a personal access token (shown only once).',
    help: [
      'Creates a personal access token for a user of the workspace and prints it. The token is shown',
      'only this once; only its SHA-256 hash is stored. JSON: {"id", "token"}.',
      '',
      `  --scopes      comma-separated, from the contract's catalogue: ${scopeCatalogue.join(', ')};`,
      "                only scopes the user's role holds (x-role-scopes); a member's token cannot hold",
      '                workspace:read, webhooks:manage or connectors:manage',
      '                --scopes "" creates a token without scopes',
      '  --expires-at  when the token stops working, e.g. 2026-12-31T23:59:59Z. Default: never.',
    ].join('\n'),
    options: { workspace: { type: 'string' }, user: { type: 'string' }, scopes: { type: 'string' }, 'expires-at': { type: 'string' } },
    positionals: 0,
    async run(context) {
      const workspaceId = required(context, 'workspace');
      const userId = required(context, 'user');
      const scopesOption = context.values.scopes;
      if (typeof scopesOption !== 'string') throw new CliError('Missing required option --scopes (use --scopes "" for a token without scopes).');
      const scopes = scopesOption.split(',').map((scope) => scope.trim()).filter(Boolean);
      const expiresAt = parseExpiresAt(context.values['expires-at']);
      const [{ createPersonalAccessTokenStore }, { issuePersonalAccessToken }] = await Promise.all([
        modules.personalAccessTokens(),
        modules.issuePersonalAccessTokens(),
      ]);
      const created = await issuePersonalAccessToken(createPersonalAccessTokenStore(await context.db(), { now: context.now }), { workspaceId, userId, scopes, expiresAt });
      return {
        json: created,
        text: [
          `Created personal access token ${created.id} for ${userId} in ${workspaceId} (scopes: ${scopes.join(', ') || 'none'}).`,
          'The token is shown only now; store it safely:',
          '',
          `  ${created.token}`,
          '',
          'Use it as: Authorization: Bearer <token>',
        ].join('\n'),
      };
    },
  },
  {
    path: ['pat', 'revoke'],
    usage: 'pat revoke <token id>',
    summary: 'Revoke a personal access token.',
    help: 'Revokes a token by its id (pat_…); requests with it then answer 401 unauthenticated. Revoking a revoked token changes nothing and prints the original time. JSON: {"id", "revokedAt"}.',
    options: {},
    positionals: 1,
    async run(context) {
      const id = positional(context, 'token to revoke (pat_…)');
      const { createPersonalAccessTokenStore } = await modules.personalAccessTokens();
      const revoked = await createPersonalAccessTokenStore(await context.db(), { now: context.now }).revokePat(id);
      const revokedAt = iso(revoked.revokedAt);
      return { json: { id: revoked.id, revokedAt }, text: `Revoked ${revoked.id} at ${revokedAt}.` };
    },
  },
  {
    path: ['pat', 'rotate'],
    usage: 'pat rotate <token id>',
    summary: 'Replace a personal access token with a new one (the old one is revoked).',
    help: 'Issues a new token with the same user, scopes and expiry and revokes the old one, in one transaction. Only an active token can be rotated. The new token is shown only this once. JSON: {"id", "token"} of the new token.',
    options: {},
    positionals: 1,
    async run(context) {
      const id = positional(context, 'token to rotate (pat_…)');
      const [{ createPersonalAccessTokenStore }, { rotatePersonalAccessToken }] = await Promise.all([
        modules.personalAccessTokens(),
        modules.issuePersonalAccessTokens(),
      ]);
      const rotated = await rotatePersonalAccessToken(createPersonalAccessTokenStore(await context.db(), { now: context.now }), id);
      return {
        json: rotated,
        text: [`Rotated ${id}: it is revoked, and ${rotated.id} replaces it. The new token is shown only now:`, '', `  ${rotated.token}`].join('\n'),
      };
    },
  },
  {
    path: ['pat', 'list'],
    usage: 'pat list --workspace <workspace id>',
    summary: 'List a workspace\'s personal access tokens (never the tokens themselves).',
    help: 'Lists a workspace\'s tokens, oldest first, with their 12-character prefix, user, scopes and state (active, revoked or expired). JSON: {"tokens": [{"id", "userId", "prefix", "scopes", "state", "createdAt", "expiresAt", "revokedAt", "rotatedTo"}]}.',
    options: { workspace: { type: 'string' } },
    positionals: 0,
    async run(context) {
      const workspaceId = required(context, 'workspace');
      const [{ createWorkspaceStore }, { createPersonalAccessTokenStore }] = await Promise.all([modules.workspaces(), modules.personalAccessTokens()]);
      const db = await context.db();
      if (!(await createWorkspaceStore(db).getWorkspace(workspaceId))) throw new CliError(`No workspace with id "${workspaceId}".`);
      const tokens = (await createPersonalAccessTokenStore(db, { now: context.now }).listPats(workspaceId)).map((token) => ({
        id: token.id,
        userId: token.userId,
        prefix: token.prefix,
        scopes: token.scopes,
        state: token.state,
        createdAt: iso(token.createdAt),
        expiresAt: iso(token.expiresAt),
        revokedAt: iso(token.revokedAt),
        rotatedTo: token.rotatedTo,
      }));
      const text =
        tokens.length === 0
          ? `Workspace ${workspaceId} has no personal access tokens.`
          : tokens
              .map(
                (token) =>
                  `${token.id}  ${token.prefix}…  ${token.state.padEnd(7)}  ${token.userId}  [${token.scopes.join(' ')}]  created ${token.createdAt}` +
                  (token.expiresAt ? `  expires ${token.expiresAt}` : '') +
                  (token.revokedAt ? `  revoked ${token.revokedAt}` : '') +
                  (token.rotatedTo ? `  rotated to ${token.rotatedTo}` : ''),
              )
              .join('\n');
      return { json: { tokens }, text };
    },
  },
];
