import { scopeCatalogue } from '../../generated/work-platform/rules.js';
import type { components } from '../../generated/work-platform/types.js';

type CurrencyCode = components['schemas']['CurrencyCode'];
// The Work-Platform part of the demo data set: a workspace on the free plan with three projects
// and over 120 tasks (ties on dueOn, priority, title and createdAt, some without a due date) so that
// sorting and paging show, users of every role, tokens of every kind, and a second workspace to
// prove isolation, and a small CRM (companies, contacts, deals in every stage). Ids and content are deterministic; tokens are new on every load.
import { createHash } from 'node:crypto';
import { inArray } from 'drizzle-orm';
import * as schema from '../../db/schema.js';
import { engineOf, type StoreEngine, type StoreSource } from '../store/engine.js';
import type { RandomBytes } from '../store/ids.js';
import { issuePersonalAccessToken } from '../auth/personalAccessTokens.js';
import { createPersonalAccessTokenStore } from '../store/personalAccessTokens.js';
import { createProjectStore } from '../store/projects.js';
import { createCompanyStore } from '../store/companies.js';
import { createContactStore } from '../store/contacts.js';
import { createDealStore, type DealStage } from '../store/deals.js';
import { createContractStore, type ContractMove, type ContractStore } from '../store/contracts.js';
import { issueSessionToken } from '../auth/sessionTokens.js';
import { createTaskStore, type TaskPriority, type TaskStatus } from '../store/tasks.js';
import { createUserStore, type WorkspaceRole } from '../store/users.js';
import { outboxEventTypes } from '../store/outboxEvents.js';
import { createWebhookSubscriptions } from '../webhooks/subscriptions.js';
import type { SecretBox } from '../auth/secretBox.js';
import type { RingKey } from '../auth/keyRings.js';
import { createWorkspaceStore, type WorkspacePlan } from '../store/workspaces.js';
import { registerOauthClient } from '../auth/oauth/clientRegistration.js';
import { createOauthClientStore } from '../store/oauthClients.js';
import { createConnectorStore } from '../store/connectors.js';
import { sealCredential } from '../workPlatform/connectorCalls.js';

export interface WorkPlatformDemoFixture {
  /** The main demo workspace (plan free). */
  workspaceId: string;
  plan: WorkspacePlan;
  /** The main project: the one most demo tasks belong to. */
  projectId: string;
  /** Every task of the main workspace (over 120), in creation order. */
  taskIds: string[];
  tokens: {
    /** PAT with every scope (owner). */
    all: string;
    /** PAT with tasks:read only. */
    readOnly: string;
    /** PAT without scopes. */
    noScopes: string;
    /** PAT with every scope, revoked. */
    revoked: string;
    /** Owner's session token, valid for 24 hours. */
    session: string;
    /** Plain member's session token, valid for 24 hours. */
    memberSession: string;
    /** Owner's session token that is valid except that it has expired (an hour ago). */
    expiredSession: string;
  };
  /** CRM records of the main workspace, in creation order. */
  crm: { companyIds: string[]; contactIds: string[]; dealIds: string[] };
  /** Contracts of the main workspace: one in each status, and the ones the contract's path examples name. */
  contracts: DemoContracts;
  otherWorkspace: { workspaceId: string; projectId: string; taskId: string; webhookId: string; companyId: string; contactId: string; dealId: string; contractId: string; connectorId: string; token: string };
  /** GitHub connectors of the main workspace, one in each status (see demoConnectors). */
  connectors: { connected: string; expired: string; disconnected: string };
  /** The ACTIVE webhook subscription of the main workspace (every event type) and its signing secret, new on every load. */
  webhook: { id: string; url: string; secret: string };
  /** An origin on the default CORS allowlist (CORS_ALLOWED_ORIGINS). */
  allowedOrigin: string;
  /** A public OAuth 2.0 client of the main workspace (every scope, PKCE), for trying the authorization code flow. */
  oauthClient: { id: string; redirectUri: string; scopes: string[] };
}

export const demoWorkspaces = {
  main: { id: 'ten_demoNorthwindStudio', name: 'Northwind Studio (demo)', plan: 'free' },
  other: { id: 'ten_demoHarborLabs', name: 'Harbor Labs (demo, another workspace)', plan: 'pro' },
} as const satisfies Record<string, { id: string; name: string; plan: WorkspacePlan }>;

export const demoUsers = {
  owner: { id: 'usr_demoOwnerMara', workspace: 'main', role: 'owner', name: 'Mara Lindqvist', email: 'mara@northwind.example' },
  admin: { id: 'usr_demoAdminTeo', workspace: 'main', role: 'admin', name: 'Teo Alvarez', email: 'teo@northwind.example' },
  member: { id: 'usr_demoMemberKai', workspace: 'main', role: 'member', name: 'Kai Okafor', email: 'kai@northwind.example' },
  otherOwner: { id: 'usr_demoOwnerRuth', workspace: 'other', role: 'owner', name: 'Ruth Brandt', email: 'ruth@harborlabs.example' },
} as const satisfies Record<string, { id: string; workspace: keyof typeof demoWorkspaces; role: WorkspaceRole; name: string; email: string }>;

export const demoAllowedOrigin = 'http://localhost:5173';

/** The demo's public OAuth client: a command-line tool with a loopback redirect URI (RFC 8252). */
export const demoOauthClient = { id: 'ocl_demoNorthwindCli', name: 'Northwind CLI (demo)', redirectUri: 'http://127.0.0.1:8976/callback' } as const;

/** The contract's `webhookId` example names it, so the Postman collection can use it. */
export const demoWebhook = { id: 'whk_Q7mXc2VbN9pLr4TzK8sD', url: 'https://hooks.example.com/work-platform' } as const;
/** The other workspace's subscription, which Northwind must never see. */
export const otherDemoWebhook = { id: 'whk_demoHarborLabsReceiver', url: 'https://hooks.harborlabs.example/events' } as const;

const hour = 60 * 60;
const day = 24 * 60 * 60 * 1000;

// Titles repeat on purpose (within and across projects): the title sort must break ties by id.
const demoProjects = [
  {
    name: 'Website relaunch',
    description: 'New marketing site on the headless CMS, live before the spring campaign.',
    titles: [
      'Audit current site analytics',
      'Define information architecture',
      'Write homepage copy',
      'Design homepage hero',
      'Build navigation component',
      'Set up preview deployments',
      'Migrate blog posts to the CMS',
      'Redirect legacy URLs',
      'Optimize hero images',
      'Add cookie consent banner',
      'Fix layout shift on pricing page',
      'Localize pricing page (German)',
      'Localize pricing page (French)',
      'Review form accessibility',
      'Add structured data to articles',
      'Configure CDN caching rules',
      'Write 404 page copy',
      'Set up uptime monitoring',
      'Load-test the contact form',
      'Update privacy policy',
      'Weekly status update',
      'Create case study template',
      'Embed customer logos',
      'Draft launch announcement',
      'Fix flaky end-to-end test',
      'Set up search indexing',
      'Add newsletter signup',
      'Design pricing comparison table',
      'QA on Safari and Firefox',
      'Compress web fonts',
      'Update dependencies',
      'Write careers page',
      'Add RSS feed for the blog',
      'Weekly status update',
      'Set up A/B test for hero copy',
      'Remove unused CSS',
      'Check color contrast',
      'Add Open Graph images',
      'Create sitemap.xml',
      'Migrate forms to the new CRM',
      'Fix flaky end-to-end test',
      'Review copy with legal',
      'Train editors on the CMS',
      'Plan launch-day rollback',
      'Weekly status update',
      'Set up error tracking',
      'Translate navigation labels',
      'Measure Core Web Vitals',
      'Archive old landing pages',
      'Final launch checklist',
      'Update dependencies',
      'Weekly status update',
      'Announce launch internally',
      'Post-launch retrospective',
    ],
  },
  {
    name: 'Mobile app 2.0',
    description: 'Offline mode, push notifications and a redesigned task view.',
    titles: [
      'Spike: offline sync strategy',
      'Design task list redesign',
      'Implement local database layer',
      'Queue writes while offline',
      'Resolve sync conflicts',
      'Push notification permissions flow',
      'Send due-date reminders',
      'Dark mode color tokens',
      'Fix crash on Android 12 rotation',
      'Reduce cold start time',
      'Update dependencies',
      'Add biometric login',
      'Accessibility labels on buttons',
      'Fix flaky end-to-end test',
      'Beta build for TestFlight',
      'Collect beta feedback',
      'Crash-free sessions dashboard',
      'Deep links to tasks',
      'Swipe to complete a task',
      'Haptic feedback on completion',
      'Empty states illustrations',
      'Translate app store listing',
      'App store screenshots',
      'Review in-app purchase flow',
      'Migrate to new API client',
      'Paginate task lists with cursors',
      'Weekly status update',
      'Background refresh budget',
      'Test on low-end devices',
      'Fix date picker time zones',
      'Onboarding carousel copy',
      'Privacy nutrition label',
      'Release notes for 2.0',
      'Staged rollout plan',
      'Monitor ANR rate',
      'Tablet layout for task detail',
      'Widget: tasks due today',
      'Fix keyboard covering inputs',
      'Remove legacy analytics SDK',
      'Sign release builds in CI',
      'Localize push notifications',
      'Post-release hotfix window',
    ],
  },
  {
    name: 'Customer onboarding',
    description: null,
    titles: [
      'Map the onboarding journey',
      'Interview five new customers',
      'Write welcome email sequence',
      'Create sample workspace template',
      'Record product tour video',
      'Set up in-app checklist',
      'Define activation metric',
      'Build activation dashboard',
      'Draft help center articles',
      'Weekly status update',
      'Import from spreadsheets',
      'Guide for API tokens',
      'Webhook quick-start guide',
      'Office hours calendar',
      'Survey after day 7',
      'Fix flaky end-to-end test',
      'Update dependencies',
      'Translate onboarding emails',
      'Churn-risk alerts for CSMs',
      'Hand-off checklist from sales',
      'Kick-off call script',
      'Review trial length',
      'Reactivation campaign',
      'Annotate onboarding funnel',
      'Publish onboarding playbook',
      'Quarterly onboarding review',
    ],
  },
] as const;

const priorities: TaskPriority[] = ['MEDIUM', 'HIGH', 'LOW', 'MEDIUM', 'MEDIUM', 'HIGH', 'LOW'];
/** Days after the start of the timeline; null = no due date. Repeats give ties on dueOn. */
const dueOffsets: (number | null)[] = [42, 49, null, 42, 56, 35, 63, null, 49, 70, 42, 28, null, 56, 49];
const assigneeCycle = [demoUsers.owner.id, demoUsers.member.id, null, demoUsers.admin.id, demoUsers.member.id];

/** Deterministic bytes, so that reloading creates the same project and task ids. */
function seededRandomBytes(seed: string): RandomBytes {
  let counter = 0;
  return (size) => {
    const out = Buffer.alloc(size);
    for (let filled = 0; filled < size; counter += 1) {
      filled += createHash('sha256').update(`${seed}:${counter}`).digest().copy(out, filled);
    }
    return new Uint8Array(out);
  };
}

/**
 * Loads (or reloads) the Work-Platform demo inside the caller's transaction. Projects, tasks and
 * webhook subscriptions of the two demo workspaces are replaced by the same deterministic set;
 * they are seed data, not activity, so the outbox rows (and deliveries) their creation causes are
 * removed again. Users are kept, tokens and the demo subscription's signing secret are new on
 * every load and earlier tokens stay valid.
 */
export async function loadWorkPlatformDemo(
  db: StoreSource,
  now: () => number,
  sessionSecret: Uint8Array | RingKey,
  webhookSecretBox: SecretBox,
): Promise<WorkPlatformDemoFixture> {
  const workspaceStore = createWorkspaceStore(db, { now });
  const userStore = createUserStore(db, { now });
  const tokenStore = createPersonalAccessTokenStore(db, { now });

  for (const workspace of Object.values(demoWorkspaces)) {
    if (!(await workspaceStore.getWorkspace(workspace.id))) await workspaceStore.createWorkspace(workspace);
  }
  for (const user of Object.values(demoUsers)) {
    if (!(await userStore.getUser(user.id))) {
      await userStore.createUser({ id: user.id, workspaceId: demoWorkspaces[user.workspace].id, role: user.role, name: user.name, email: user.email });
    }
  }
  const engine = engineOf(db);
  for (const table of [schema.contracts, schema.webhookSubscriptions, schema.dealContacts, schema.deals, schema.contacts, schema.companies, schema.tasks, schema.projects]) {
    await deleteDemoRows(engine, table);
  }

  // A scripted clock: the timeline starts 45 days before today (UTC midnight) and moves by a few
  // minutes per task, sometimes not at all, so that createdAt has ties too.
  const start = Math.floor(now() / day) * day - 45 * day;
  let clock = start;
  const scripted = () => clock;
  const random = seededRandomBytes('work-platform-demo');
  const projects = createProjectStore(db, { now: scripted, randomBytes: random });
  const tasks = createTaskStore(db, { now: scripted, randomBytes: random });
  const owner = { id: demoUsers.owner.id, kind: 'USER' as const };

  const projectIds: string[] = [];
  for (const project of demoProjects) {
    clock += 60_000;
    projectIds.push((await projects.createProject(demoWorkspaces.main.id, { name: project.name, description: project.description }, owner)).id);
  }
  const taskIds: string[] = [];
  let index = 0;
  for (const [projectIndex, project] of demoProjects.entries()) {
    for (const title of project.titles) {
      if (index % 4 !== 3) clock += ((index * 7) % 11) * 60_000 + 60_000;
      const due = dueOffsets[index % dueOffsets.length]!;
      const task = await tasks.createTask(
        demoWorkspaces.main.id,
        {
          projectId: projectIds[projectIndex]!,
          title,
          priority: priorities[index % priorities.length]!,
          dueOn: due === null ? null : new Date(start + due * day + (index % 3 === 0 ? 17 * hour * 1000 : 0)).toISOString(),
          assigneeId: assigneeCycle[index % assigneeCycle.length]!,
        },
        owner,
      );
      taskIds.push(task.id);
      index += 1;
    }
  }

  // Later work: some tasks move on, so that status, updatedAt and version vary.
  clock = start + 40 * day;
  const progress: TaskStatus[] = ['IN_PROGRESS', 'DONE', 'BLOCKED', 'DONE', 'DONE'];
  for (const [position, id] of taskIds.entries()) {
    if (position % 3 !== 0) continue;
    clock += (position % 2) * 37 * 60_000;
    const status = progress[(position / 3) % progress.length]!;
    const updated = await tasks.updateTask(demoWorkspaces.main.id, id, { status }, 1, owner);
    if (status === 'DONE' && position % 2 === 0) await tasks.updateTask(demoWorkspaces.main.id, id, { priority: 'LOW' }, updated.version, owner);
  }

  const otherOwner = { id: demoUsers.otherOwner.id, kind: 'USER' as const };
  clock = start;
  const otherProjectId = (await projects.createProject(demoWorkspaces.other.id, { name: 'Harbor internal tools', description: 'Another workspace: never visible to Northwind.' }, otherOwner)).id;
  const otherTaskId = (await tasks.createTask(demoWorkspaces.other.id, { projectId: otherProjectId, title: 'Renew TLS certificates', priority: 'HIGH' }, otherOwner)).id;
  // An empty project, created last so the ids above stay as they were: the contract's
  // `projectId` examples name it, so the Postman collection can update and delete it.
  clock = start + 41 * day;
  await projects.createProject(demoWorkspaces.main.id, { name: 'Someday', description: 'Ideas without a home yet.' }, owner);

  const crm = await loadCrmDemo(db, start, seededRandomBytes('work-platform-crm-demo'));
  const contractIds = await loadContractDemo(db, start, now, crm.main, crm.other);

  const connectors = await loadConnectorDemo(db, start, webhookSecretBox);
  taskIds.push(...(await loadAnalyticsDemo(db, start, projectIds[projectIds.length - 1]!, seededRandomBytes('work-platform-analytics-demo'))));

  // Deleting the events deletes their deliveries too (foreign key cascade).
  await deleteDemoRows(engine, schema.events);

  // Created after the seed's events are gone, so it has no deliveries: the delivery log starts empty.
  clock = start + 42 * day;
  // Fixed placeholder URLs: nothing to resolve (each delivery checks its target).
  const webhooks = createWebhookSubscriptions(db, { secretBox: webhookSecretBox, now: scripted, resolver: false });
  const webhook = await webhooks.createWebhook(
    demoWorkspaces.main.id,
    { url: demoWebhook.url, eventTypes: outboxEventTypes, description: 'Demo subscription: every event type, to a placeholder receiver.' },
    { id: demoWebhook.id, createdBy: demoUsers.admin.id },
  );
  await webhooks.createWebhook(demoWorkspaces.other.id, { url: otherDemoWebhook.url, eventTypes: ['task.completed'], description: null }, { id: otherDemoWebhook.id, createdBy: demoUsers.otherOwner.id });

  // Registered once and kept: tokens issued to it by earlier runs stay valid.
  const oauthClients = createOauthClientStore(db, { now });
  if (!(await oauthClients.getOauthClient(demoOauthClient.id))) {
    await registerOauthClient(oauthClients, {
      id: demoOauthClient.id,
      workspaceId: demoWorkspaces.main.id,
      name: demoOauthClient.name,
      redirectUris: [demoOauthClient.redirectUri],
      scopes: scopeCatalogue,
      confidential: false,
    });
  }

  const pat = (userId: string, workspaceId: string, scopes: readonly string[]) => issuePersonalAccessToken(tokenStore, { workspaceId, userId, scopes });
  const mainId = demoWorkspaces.main.id;
  const revoked = await pat(demoUsers.owner.id, mainId, scopeCatalogue);
  await tokenStore.revokePat(revoked.id);
  const session = (userId: string, lifetimeSeconds: number) =>
    issueSessionToken(sessionSecret, { userId, workspaceId: mainId, lifetimeSeconds, now: now() });

  return {
    workspaceId: mainId,
    plan: (await workspaceStore.getWorkspace(mainId))!.plan,
    projectId: projectIds[0]!,
    taskIds,
    crm: crm.main,
    contracts: contractIds.main,
    tokens: {
      all: (await pat(demoUsers.owner.id, mainId, scopeCatalogue)).token,
      readOnly: (await pat(demoUsers.member.id, mainId, ['tasks:read'])).token,
      noScopes: (await pat(demoUsers.member.id, mainId, [])).token,
      revoked: revoked.token,
      session: session(demoUsers.owner.id, 24 * hour),
      memberSession: session(demoUsers.member.id, 24 * hour),
      expiredSession: session(demoUsers.owner.id, -hour),
    },
    otherWorkspace: {
      workspaceId: demoWorkspaces.other.id,
      projectId: otherProjectId,
      taskId: otherTaskId,
      companyId: crm.other.companyId,
      contactId: crm.other.contactId,
      dealId: crm.other.dealId,
      contractId: contractIds.other,
      connectorId: connectors.other,
      webhookId: otherDemoWebhook.id,
      token: (await pat(demoUsers.otherOwner.id, demoWorkspaces.other.id, scopeCatalogue)).token,
    },
    connectors: connectors.main,
    webhook: { id: webhook.webhook.id, url: webhook.webhook.url, secret: webhook.secret },
    allowedOrigin: demoAllowedOrigin,
    oauthClient: { id: demoOauthClient.id, redirectUri: demoOauthClient.redirectUri, scopes: [...(await oauthClients.getOauthClient(demoOauthClient.id))!.scopes] },
  };
}

type WorkspaceTable = typeof schema.contracts | typeof schema.webhookSubscriptions | typeof schema.dealContacts | typeof schema.deals | typeof schema.contacts
  | typeof schema.companies | typeof schema.tasks | typeof schema.projects | typeof schema.events | typeof schema.connectors | typeof schema.importedIssues;

/** Clears a table's rows of the two demo workspaces (a reload replaces them). */
async function deleteDemoRows(engine: StoreEngine, table: WorkspaceTable): Promise<void> {
  await engine.statement(engine.orm.delete(table).where(inArray(table.workspaceId, [demoWorkspaces.main.id, demoWorkspaces.other.id]))).run({});
}

const demoCompanies = [
  { name: 'Contoso Ltd', domain: 'contoso.example', description: 'Regional distributor; renews every spring.' },
  { name: 'Fabrikam Inc', domain: 'fabrikam.example', description: null },
  { name: 'Tailspin Toys', domain: 'tailspin.example', description: 'Wants the studio for its holiday campaign.' },
  { name: 'Adatum Corporation', domain: null, description: null },
];
const demoContacts = [
  { name: 'Dana Whitfield', email: 'dana@contoso.example', phone: '+4930123456', company: 0 },
  { name: 'Sam Ortiz', email: 'sam@contoso.example', phone: null, company: 0 },
  { name: 'Priya Nair', email: 'priya@fabrikam.example', phone: '+14155550100', company: 1 },
  { name: 'Lee Chen', email: 'lee@tailspin.example', phone: null, company: 2 },
  { name: 'Alex Moreau', email: null, phone: '+33142000000', company: null },
];
const demoDeals: { title: string; stage: DealStage; amountMinor: number; currency: CurrencyCode; company: number | null; contacts: number[]; closeInDays: number | null; movesTo?: DealStage }[] = [
  { title: 'Contoso annual licence', stage: 'lead', amountMinor: 1_250_000, currency: 'EUR', company: 0, contacts: [0, 1], closeInDays: 30, movesTo: 'qualified' },
  { title: 'Contoso onboarding workshop', stage: 'proposal', amountMinor: 480_000, currency: 'EUR', company: 0, contacts: [0], closeInDays: 12 },
  { title: 'Fabrikam site relaunch', stage: 'qualified', amountMinor: 3_900_000, currency: 'USD', company: 1, contacts: [2], closeInDays: 60, movesTo: 'negotiation' },
  { title: 'Fabrikam support plan', stage: 'won', amountMinor: 900_000, currency: 'USD', company: 1, contacts: [2], closeInDays: null },
  { title: 'Tailspin holiday campaign', stage: 'lead', amountMinor: 2_000_000, currency: 'GBP', company: 2, contacts: [3], closeInDays: 45, movesTo: 'lost' },
  { title: 'Tailspin mascot redesign', stage: 'negotiation', amountMinor: 750_000, currency: 'GBP', company: 2, contacts: [], closeInDays: 7 },
  { title: 'Referral from Alex', stage: 'lead', amountMinor: 120_000_000, currency: 'JPY', company: null, contacts: [4], closeInDays: null },
];
const dealOwners = [demoUsers.owner.id, demoUsers.admin.id, demoUsers.member.id];

/**
 * The CRM part: companies, contacts and deals of the main workspace (some deals moved on, so that
 * stage_changed and versions show) and one of each in the other workspace. The last company,
 * contact and deal of the main workspace are created last and never changed: the contract's path
 * examples name them (version 1, no deal names that company or contact), so the Postman
 * collection can read, update and delete them.
 */
async function loadCrmDemo(db: StoreSource, start: number, random: RandomBytes) {
  let clock = start + 20 * day;
  const scripted = () => clock;
  const companies = createCompanyStore(db, { now: scripted, randomBytes: random });
  const contacts = createContactStore(db, { now: scripted, randomBytes: random });
  const deals = createDealStore(db, { now: scripted, randomBytes: random });
  const owner = { id: demoUsers.owner.id, kind: 'USER' as const };
  const main = demoWorkspaces.main.id;
  const dayOf = (offset: number) => new Date(start + offset * day).toISOString().slice(0, 10);

  const companyIds: string[] = [];
  for (const company of demoCompanies) {
    clock += 3 * 60_000;
    companyIds.push((await companies.createCompany(main, company, owner)).id);
  }
  const contactIds: string[] = [];
  for (const { company, ...contact } of demoContacts) {
    clock += 2 * 60_000;
    contactIds.push((await contacts.createContact(main, { ...contact, companyId: company === null ? null : companyIds[company]! }, owner)).id);
  }
  const dealIds: string[] = [];
  for (const [index, deal] of demoDeals.entries()) {
    clock += index % 3 === 2 ? 0 : 5 * 60_000;
    const created = await deals.createDeal(
      main,
      {
        title: deal.title,
        stage: deal.stage,
        amountMinor: deal.amountMinor,
        currency: deal.currency,
        ownerId: dealOwners[index % dealOwners.length]!,
        companyId: deal.company === null ? null : companyIds[deal.company]!,
        contactIds: deal.contacts.map((contact) => contactIds[contact]!),
        expectedCloseOn: deal.closeInDays === null ? null : dayOf(45 + deal.closeInDays),
      },
      owner,
    );
    dealIds.push(created.id);
  }
  clock = start + 38 * day;
  for (const [index, deal] of demoDeals.entries()) {
    if (!deal.movesTo) continue;
    clock += 60 * 60_000;
    await deals.updateDeal(main, dealIds[index]!, { stage: deal.movesTo }, 1, owner);
  }

  // The contract's examples: a company with one contact and no deal, a contact on no deal, a deal.
  clock = start + 41 * day;
  const exampleCompany = (await companies.createCompany(main, { name: 'Litware Labs', domain: 'litware.example', description: 'Met at a trade fair; no deal yet.' }, owner)).id;
  const detachedOnDelete = (await contacts.createContact(main, { name: 'Robin Vale', email: 'robin@litware.example', companyId: exampleCompany }, owner)).id;
  const exampleContact = (await contacts.createContact(main, { name: 'Jordan Blake', email: 'jordan@litware.example', phone: '+442071234567', companyId: exampleCompany }, owner)).id;
  const exampleDeal = await deals.createDeal(
    main,
    { title: 'Litware pilot', stage: 'lead', amountMinor: 250_000, currency: 'EUR', ownerId: demoUsers.owner.id, expectedCloseOn: dayOf(75) },
    owner,
  );

  const otherOwner = { id: demoUsers.otherOwner.id, kind: 'USER' as const };
  const other = demoWorkspaces.other.id;
  const otherCompany = (await companies.createCompany(other, { name: 'Harbor customer', domain: 'customer.harbor.example' }, otherOwner)).id;
  const otherContact = (await contacts.createContact(other, { name: 'Harbor contact', companyId: otherCompany }, otherOwner)).id;
  const otherDeal = await deals.createDeal(
    other,
    { title: 'Harbor renewal', amountMinor: 99_00, currency: 'USD', ownerId: demoUsers.otherOwner.id, companyId: otherCompany, contactIds: [otherContact] },
    otherOwner,
  );

  return {
    main: { companyIds: [...companyIds, exampleCompany], contactIds: [...contactIds, detachedOnDelete, exampleContact], dealIds: [...dealIds, exampleDeal.id] },
    other: { companyId: otherCompany, contactId: otherContact, dealId: otherDeal.id },
  };
}

/** The demo's contracts by what they show (see loadContractDemo). */
export interface DemoContracts {
  draft: string;
  sent: string;
  signed: string;
  declined: string;
  /** Sent, expiresOn 15 days ago: recorded as expired by the sweep at load. */
  expired: string;
  /** The draft that the `contractId` example of send names. */
  toSend: string;
  /** Sent contracts that the examples of sign, decline and withdraw name. */
  toSign: string;
  toDecline: string;
  toWithdraw: string;
  /** The draft of the general `contractId` example (get, update, delete): version 1. */
  example: string;
}

/**
 * Contracts of the demo CRM, one in each status. They name demo companies and deals that the
 * contract's CRM examples do not delete; their own ids come from a seed of their own, so they
 * stay the same whatever else the demo creates. The contract's `contractId` examples name the last
 * five: the Postman collection sends, signs, declines and withdraws one each, and reads, updates
 * and deletes the example draft.
 */
async function loadContractDemo(
  db: StoreSource,
  start: number,
  now: () => number,
  main: { companyIds: string[]; dealIds: string[] },
  other: { companyId: string; dealId: string },
): Promise<{ main: DemoContracts; other: string }> {
  let clock = start + 43 * day;
  const store = createContractStore(db, { now: () => clock, randomBytes: seededRandomBytes('work-platform-contract-demo') });
  const owner = { id: demoUsers.owner.id, kind: 'USER' as const };
  const workspace = demoWorkspaces.main.id;
  const dayOf = (offset: number) => new Date(start + offset * day).toISOString().slice(0, 10);
  const create = async (input: Parameters<ContractStore['createContract']>[1]) => {
    clock += 5 * 60_000;
    return (await store.createContract(workspace, input, owner)).id;
  };
  const move = async (id: string, moves: ContractMove[]) => {
    for (const step of moves) {
      clock += 60 * 60_000;
      await store.moveContract(workspace, id, step, null, owner);
    }
  };
  const [contoso, fabrikam] = [main.companyIds[0]!, main.companyIds[1]!];
  const [firstDeal, secondDeal] = [main.dealIds[0]!, main.dealIds[1]!];

  clock = start + 20 * day;
  const expired = await create({ title: 'Fabrikam pilot terms', companyId: fabrikam, expiresOn: dayOf(30), body: 'Pilot for 30 days; offer lapsed unsigned.' });
  await move(expired, ['send']);
  clock = start + 43 * day;
  const draft = await create({ title: 'Contoso support add-on', companyId: contoso, amountMinor: 480_000, currency: 'EUR', expiresOn: dayOf(90) });
  const sent = await create({ title: 'Contoso master agreement', dealId: firstDeal, amountMinor: 1_250_000, currency: 'EUR', expiresOn: dayOf(75), body: 'Annual licence, 50 seats.' });
  await move(sent, ['send']);
  const signed = await create({ title: 'Fabrikam data processing addendum', companyId: fabrikam, expiresOn: dayOf(60) });
  await move(signed, ['send', 'sign']);
  const declined = await create({ title: 'Second deal: first offer', dealId: secondDeal, amountMinor: 900_000, currency: 'USD', expiresOn: dayOf(70) });
  await move(declined, ['send', 'decline']);
  const examples: string[] = [];
  for (const title of ['Send example', 'Sign example', 'Decline example', 'Withdraw example']) {
    examples.push(await create({ title, companyId: contoso, expiresOn: dayOf(80) }));
  }
  const [toSend, toSign, toDecline, toWithdraw] = examples as [string, string, string, string];
  await move(toSign, ['send']);
  await move(toDecline, ['send']);
  await move(toWithdraw, ['send']);
  const example = await create({ title: 'Example draft', companyId: contoso, expiresOn: dayOf(80) });

  const otherContract = await store.createContract(
    demoWorkspaces.other.id,
    { title: 'Harbor renewal terms', dealId: other.dealId, expiresOn: dayOf(80) },
    { id: demoUsers.otherOwner.id, kind: 'USER' },
  );
  // The lapsed offer is recorded as expired as the server's sweep would, as of the real now.
  clock = now();
  await store.expireOverdueContracts();
  return { main: { draft, sent, signed, declined, expired, toSend, toSign, toDecline, toWithdraw, example }, other: otherContract.id };
}

/**
 * The demo's connectors: three GitHub connectors of the main workspace, one in each status, so
 * that each connector case can be called with the demo token. The `connected` one holds a
 * placeholder token (GitHub refuses it: an import through it against the real GitHub answers
 * `409 connector-reconnect-required` and turns it `expired`, the live path of that case; the tests
 * point it at a local server that accepts it). The `expired` one's token expired 15 days into the
 * timeline; the `disconnected` one was connected, then disconnected. The other workspace has one
 * connector, never connected. The connected one's id is the contract's `connectorId` example.
 */
export const demoConnectors = {
  connected: { id: 'con_demoNorthwindGithub01', name: 'GitHub (Northwind org)', login: 'northwind-demo', token: 'ghp_demoPlaceholderTokenNotValidOnGitHub0001' },
  expired: { id: 'con_demoNorthwindGithub02', name: 'GitHub (legacy account)', login: 'mara-legacy', token: 'ghp_demoPlaceholderTokenExpired0000000002' },
  disconnected: { id: 'con_demoNorthwindGithub03', name: 'GitHub (former contractor)', login: 'contractor-demo', token: 'ghp_demoPlaceholderTokenDisconnected00003' },
  other: { id: 'con_demoHarborLabsGithub', name: 'GitHub (Harbor Labs)' },
} as const;

async function loadConnectorDemo(db: StoreSource, start: number, secretBox: SecretBox) {
  await deleteDemoRows(engineOf(db), schema.connectors);
  await deleteDemoRows(engineOf(db), schema.importedIssues);
  let clock = start + 10 * day;
  const connectors = createConnectorStore(db, { now: () => clock, randomBytes: seededRandomBytes('work-platform-connector-demo') });
  const owner = { id: demoUsers.owner.id, kind: 'USER' as const };
  const main = demoWorkspaces.main.id;
  const connect = (demo: { id: string; login: string; token: string }, expiresAt: number | null) =>
    connectors.connect(main, demo.id, { sealed: sealCredential(secretBox, demo.id, demo.token), hint: demo.token.slice(-4), expiresAt, accountLogin: demo.login }, owner);
  for (const demo of [demoConnectors.connected, demoConnectors.expired, demoConnectors.disconnected]) {
    clock += 60_000;
    await connectors.createConnector(main, { kind: 'github', name: demo.name }, owner, { id: demo.id });
    await connect(demo, demo === demoConnectors.expired ? start + 15 * day : null);
  }
  clock = start + 30 * day;
  await connectors.disconnect(main, demoConnectors.disconnected.id, owner);
  await connectors.createConnector(demoWorkspaces.other.id, { kind: 'github', name: demoConnectors.other.name }, { id: demoUsers.otherOwner.id, kind: 'USER' }, { id: demoConnectors.other.id });
  return {
    main: { connected: demoConnectors.connected.id, expired: demoConnectors.expired.id, disconnected: demoConnectors.disconnected.id },
    other: demoConnectors.other.id,
  };
}

/**
 * Six weeks of steady work, so that /v1/analytics shows something on every day: one to three
 * tasks created per day in the last project, most of them done one to six days later (never after
 * today's midnight), some left open past their due date; and a deal or two a week in three
 * currencies and every stage. Its own random stream, so the ids above stay as they were.
 */
async function loadAnalyticsDemo(db: StoreSource, start: number, projectId: string, random: RandomBytes): Promise<string[]> {
  let clock = start;
  const scripted = () => clock;
  const tasks = createTaskStore(db, { now: scripted, randomBytes: random });
  const deals = createDealStore(db, { now: scripted, randomBytes: random });
  const owner = { id: demoUsers.owner.id, kind: 'USER' as const };
  const main = demoWorkspaces.main.id;
  const today = start + 45 * day;
  const created: { id: string; doneAt: number | null }[] = [];
  for (let offset = 3; offset < 45; offset += 1) {
    for (let copy = 0; copy < 1 + ((offset * 7 + copy) % 3); copy += 1) {
      clock = start + offset * day + (9 + copy * 3) * hour * 1000;
      const serial = created.length;
      const task = await tasks.createTask(
        main,
        {
          projectId,
          title: `Weekly operations item ${serial + 1}`,
          priority: priorities[serial % priorities.length]!,
          dueOn: serial % 4 === 3 ? null : new Date(clock + (2 + (serial % 5)) * day).toISOString(),
          assigneeId: assigneeCycle[serial % assigneeCycle.length]!,
        },
        owner,
      );
      const doneAt = serial % 5 === 4 ? null : clock + (1 + (serial % 6)) * day + (serial % 7) * hour * 1000;
      created.push({ id: task.id, doneAt: doneAt !== null && doneAt <= today ? doneAt : null });
    }
  }
  for (const { id, doneAt } of [...created].filter((task) => task.doneAt !== null).sort((a, b) => a.doneAt! - b.doneAt!)) {
    clock = doneAt!;
    await tasks.updateTask(main, id, { status: 'DONE' }, 1, owner);
  }
  const currencies: CurrencyCode[] = ['EUR', 'USD', 'GBP'];
  const stages: DealStage[] = ['lead', 'qualified', 'proposal', 'negotiation', 'won', 'lost'];
  for (let serial = 0; serial < 16; serial += 1) {
    clock = start + (3 + serial * 2.6) * day + 14 * hour * 1000;
    await deals.createDeal(
      main,
      {
        title: `Renewal ${serial + 1}`,
        stage: stages[serial % stages.length]!,
        amountMinor: 150_000 + ((serial * 37_000) % 900_000),
        currency: currencies[serial % currencies.length]!,
        ownerId: dealOwners[serial % dealOwners.length]!,
      },
      owner,
    );
  }
  return created.map((task) => task.id);
}
