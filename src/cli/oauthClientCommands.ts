// Admin CLI commands of the OAuth 2.0 authorization server: registering, listing and deleting
// the clients of a workspace.
import { scopeCatalogue } from '../../generated/work-platform/rules.js';
import { CliError, iso, required, type Command } from './cliCommand.js';

// Store modules load only when a command runs, so that --help and usage errors answer at once.
const modules = {
  workspaces: () => import('../store/workspaces.js'),
  oauthClients: () => import('../store/oauthClients.js'),
  clientRegistration: () => import('../auth/oauth/clientRegistration.js'),
};

export const oauthClientGroups: Record<string, string> = {
  'oauth-client': 'OAuth 2.0 clients of a workspace: they ask the workspace\'s users for scopes (authorization code + PKCE).',
};

export const oauthClientCommands: Command[] = [
  {
    path: ['oauth-client', 'create'],
    usage: 'oauth-client create --workspace <workspace id> --name <name> --redirect-uri <URI> [--redirect-uri <URI>…] --scopes <scope,scope,…> [--confidential]',
    summary: 'Register an OAuth 2.0 client for a workspace (a confidential client\'s secret is shown only once).',
    help: [
      'Registers a client that may ask the workspace\'s users for the given scopes (they may grant',
      'fewer). Only users of this workspace can authorize it, and its tokens act in this workspace.',
      'Every client uses the authorization code flow with PKCE (S256).',
      '',
      '  --redirect-uri   where the authorization answer is sent; repeat for several. An absolute',
      '                   https URI, or http on 127.0.0.1, [::1] or localhost (RFC 8252); no',
      '                   fragment, no wildcard. Authorization requests must name one exactly.',
      `  --scopes         comma-separated, from: ${scopeCatalogue.join(', ')}`,
      '  --confidential   the client keeps a secret (a server-side application): it gets one, shown',
      '                   only now and stored as a hash. Without it the client is public (a native,',
      '                   command-line or browser application) and proves PKCE only.',
      '',
      'JSON: {"id"} for a public client, {"id", "secret"} for a confidential one.',
    ].join('\n'),
    options: {
      workspace: { type: 'string' },
      name: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      scopes: { type: 'string' },
      confidential: { type: 'boolean' },
    },
    positionals: 0,
    async run(context) {
      const workspaceId = required(context, 'workspace');
      const name = required(context, 'name');
      const redirectUris = (context.values['redirect-uri'] as unknown as string[] | undefined) ?? [];
      if (redirectUris.length === 0) throw new CliError('Missing required option --redirect-uri (repeat it for several).');
      const scopes = required(context, 'scopes').split(',').map((scope) => scope.trim()).filter(Boolean);
      const confidential = context.values.confidential === true;
      const [{ createOauthClientStore }, { registerOauthClient }] = await Promise.all([modules.oauthClients(), modules.clientRegistration()]);
      const created = await registerOauthClient(createOauthClientStore(await context.db(), { now: context.now }), {
        workspaceId,
        name,
        redirectUris,
        scopes,
        confidential,
      });
      const lines = [`Registered ${confidential ? 'confidential' : 'public'} OAuth client ${created.id} for workspace ${workspaceId}.`];
      if (created.secret) lines.push('Its client secret is shown only now; store it safely:', '', `  ${created.secret}`);
      else lines.push('It authenticates with its client id and PKCE only (token_endpoint_auth_method none).');
      return { json: created, text: lines.join('\n') };
    },
  },
  {
    path: ['oauth-client', 'list'],
    usage: 'oauth-client list --workspace <workspace id>',
    summary: 'List a workspace\'s OAuth clients (never their secrets).',
    help: 'Lists a workspace\'s clients, oldest first. JSON: {"clients": [{"id", "name", "type", "redirectUris", "scopes", "createdAt"}]}; type is public or confidential.',
    options: { workspace: { type: 'string' } },
    positionals: 0,
    async run(context) {
      const workspaceId = required(context, 'workspace');
      const [{ createWorkspaceStore }, { createOauthClientStore }] = await Promise.all([modules.workspaces(), modules.oauthClients()]);
      const db = await context.db();
      if (!(await createWorkspaceStore(db).getWorkspace(workspaceId))) throw new CliError(`No workspace with id "${workspaceId}".`);
      const clients = (await createOauthClientStore(db).listOauthClients(workspaceId)).map((client) => ({
        id: client.id,
        name: client.name,
        type: client.secretHash === null ? 'public' : 'confidential',
        redirectUris: client.redirectUris,
        scopes: client.scopes,
        createdAt: iso(client.createdAt),
      }));
      const text =
        clients.length === 0
          ? `Workspace ${workspaceId} has no OAuth clients.`
          : clients
              .map((client) => `${client.id}  ${client.type.padEnd(12)}  ${client.name}  [${client.scopes.join(' ')}]  ${client.redirectUris.join(' ')}  created ${client.createdAt}`)
              .join('\n');
      return { json: { clients }, text };
    },
  },
  {
    path: ['oauth-client', 'delete'],
    usage: 'oauth-client delete <client id>',
    summary: 'Delete an OAuth client; every token issued to it stops working at once.',
    help: 'Deletes the client (ocl_…) with every access token, refresh token, authorization code and grant issued to it, in one transaction: /v1 calls with its tokens answer 401 at once, on every server process. JSON: {"id", "deletedRecords"}.',
    options: {},
    positionals: 1,
    async run(context) {
      const id = context.positionals[0];
      if (!id) throw new CliError('Missing the id of the client to delete (ocl_…).');
      const { createOauthClientStore } = await modules.oauthClients();
      const deleted = await createOauthClientStore(await context.db()).deleteOauthClient(id);
      return { json: deleted, text: `Deleted OAuth client ${id} and ${deleted.deletedRecords} token, code and grant records issued to it.` };
    },
  },
];
