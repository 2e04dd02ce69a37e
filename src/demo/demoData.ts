// The demo data set: three portfolio tenants and two Work-Platform workspaces with deterministic
// ids and content, and fresh keys and tokens on every load. The server loads it into an empty
// database at start-up (DEMO_DATA=on); the admin CLI's `demo` command loads it on demand; tests
// call loadDemoData() directly.
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { PortfolioDocumentInput } from '../portfolio/import/importFormat.js';
import { importPortfolio } from '../portfolio/import/importPortfolio.js';
import { issueApiKey } from '../auth/apiKeys.js';
import { createApiKeyStore } from '../store/apiKeys.js';
import { keyFilePath, loadKeyRing, type RingKey } from '../auth/keyRings.js';
import { createTenantStore } from '../store/tenants.js';
import { createSecretBox, loadSealingBox, type SecretBox } from '../auth/secretBox.js';
import { avaMorenoPortfolio } from './avaMoreno.js';
import { jonasFeldPortfolio, otherTenantOnlyPostSlug, priyaRamanPortfolio } from './otherPortfolios.js';
import { engineOf, isEngine, type StoreSource } from '../store/engine.js';
import { loadWorkPlatformDemo, type WorkPlatformDemoFixture } from './workPlatformDemo.js';

/** Every demo key and slug, for tests, newman runs and people trying the API. */
export interface DemoFixture {
  portfolio: {
    /** The main tenant: a full published portfolio. */
    tenantId: string;
    apiKey: string;
    revokedApiKey: string;
    expiredApiKey: string;
    /** Key of a tenant that exists but has no published portfolio. */
    unpublishedApiKey: string;
    otherTenantId: string;
    otherTenantApiKey: string;
    /** The main tenant's published slugs, in display order. */
    published: { outcomes: string[]; posts: string[]; pages: string[] };
    /** The main tenant's unpublished slugs (stored, but answered with 404), in display order. */
    unpublished: { outcomes: string[]; posts: string[]; pages: string[] };
    /** Slugs that only the other tenant has (404 for the main tenant). */
    otherTenantOnly: { posts: string[] };
  };
  /** The Work-Platform API (/v1): workspaces, tokens of every kind, an allowed CORS origin. */
  workPlatform: WorkPlatformDemoFixture;
}

export interface LoadDemoDataOptions {
  /**
   * The key that the demo session tokens are signed with. Default: the server's, i.e.
   * SESSION_JWT_SECRET, else session-jwt.key beside the database file (created when missing).
   */
  sessionSecret?: Uint8Array | RingKey;
  /**
   * Seals the demo webhook subscription's signing secret. Default: the server's, i.e.
   * WEBHOOK_SECRET_KEY, else webhook-secrets.key beside the database file (created when missing).
   */
  webhookSecretBox?: SecretBox;
}

/** The session key the server will use for this database; a throwaway one for an in-memory database. */
function defaultSessionSecret(db: StoreSource): Uint8Array | RingKey {
  if (isEngine(db)) throw new Error('loading the demo data into an engine needs options.sessionSecret: the engine has no folder to keep the key in');
  const inMemory = db.name === '' || db.name === ':memory:' || db.memory;
  const configured = process.env.SESSION_JWT_SECRET;
  if (inMemory && !configured) return new Uint8Array(randomBytes(32));
  return loadKeyRing(configured, keyFilePath('session', dirname(db.name)), { name: 'SESSION_JWT_SECRET' }).newest();
}

/** The webhook secret box the server will use for this database; a throwaway one for an in-memory database. */
function defaultWebhookSecretBox(db: StoreSource): SecretBox {
  if (isEngine(db)) throw new Error('loading the demo data into an engine needs options.webhookSecretBox: the engine has no folder to keep the key in');
  const inMemory = db.name === '' || db.name === ':memory:' || db.memory;
  const configured = process.env.WEBHOOK_SECRET_KEY || undefined;
  if (inMemory && !configured) return createSecretBox(new Uint8Array(randomBytes(32)));
  return loadSealingBox({ webhookSecretKey: configured, dataDirectory: dirname(db.name) });
}

/**
 * The keys a load into a shared database (PostgreSQL) signs and seals with: the SESSION_JWT_SECRET
 * and WEBHOOK_SECRET_KEY every server of the deployment is given; there is no data folder to keep
 * them in. Names the missing ones instead.
 */
export function sharedDemoSecrets(env: Record<string, string | undefined>): Required<LoadDemoDataOptions> | { missing: string[] } {
  const missing = ['SESSION_JWT_SECRET', 'WEBHOOK_SECRET_KEY'].filter((name) => !env[name]?.trim());
  if (missing.length > 0) return { missing };
  return {
    sessionSecret: loadKeyRing(env.SESSION_JWT_SECRET, '', { name: 'SESSION_JWT_SECRET' }).newest(),
    webhookSecretBox: createSecretBox(loadKeyRing(env.WEBHOOK_SECRET_KEY, '', { name: 'WEBHOOK_SECRET_KEY' })),
  };
}

/** Fixed ids, so that reloading finds the demo tenants instead of adding new ones. */
export const demoTenants = {
  main: { id: 'ten_demoAvaMoreno', name: 'Ava Moreno (demo)', document: avaMorenoPortfolio },
  other: { id: 'ten_demoJonasFeld', name: 'Jonas Feld (demo)', document: jonasFeldPortfolio },
  unpublished: { id: 'ten_demoPriyaRaman', name: 'Priya Raman (demo, unpublished)', document: priyaRamanPortfolio },
} as const;

const day = 24 * 60 * 60 * 1000;

/**
 * Loads the demo data set and returns its fixture. Idempotent: the three demo tenants are
 * created when missing and their portfolios are re-imported from the same documents (replacing,
 * never duplicating, their content; `updatedAt` moves to now). The two demo workspaces get the
 * same projects and tasks again (same ids; timestamps relative to now). Every call issues new
 * keys and tokens; keys and tokens from earlier calls stay valid. Other tenants and workspaces
 * are never touched.
 */
export async function loadDemoData(db: StoreSource, now: () => number = Date.now, options: LoadDemoDataOptions = {}): Promise<DemoFixture> {
  const sessionSecret = options.sessionSecret ?? defaultSessionSecret(db);
  const webhookSecretBox = options.webhookSecretBox ?? defaultWebhookSecretBox(db);
  const tenantStore = createTenantStore(db, { now });
  const keyStore = createApiKeyStore(db, { now });

  return engineOf(db).write(async (): Promise<DemoFixture> => {
    for (const tenant of Object.values(demoTenants)) {
      if (!(await tenantStore.getTenant(tenant.id))) await tenantStore.createTenant(tenant.name, { id: tenant.id });
      await importPortfolio(db, tenant.id, tenant.document, now);
    }
    const mainId = demoTenants.main.id;
    const revoked = await issueApiKey(keyStore, { tenantId: mainId });
    await keyStore.revokeApiKey(revoked.id);

    return {
      portfolio: {
        tenantId: mainId,
        apiKey: (await issueApiKey(keyStore, { tenantId: mainId })).key,
        revokedApiKey: revoked.key,
        expiredApiKey: (await issueApiKey(keyStore, { tenantId: mainId, expiresAt: now() - day })).key,
        unpublishedApiKey: (await issueApiKey(keyStore, { tenantId: demoTenants.unpublished.id })).key,
        otherTenantId: demoTenants.other.id,
        otherTenantApiKey: (await issueApiKey(keyStore, { tenantId: demoTenants.other.id })).key,
        published: slugsOf(avaMorenoPortfolio, true),
        unpublished: slugsOf(avaMorenoPortfolio, false),
        otherTenantOnly: { posts: [otherTenantOnlyPostSlug] },
      },
      workPlatform: await loadWorkPlatformDemo(db, now, sessionSecret, webhookSecretBox),
    };
  });
}

function slugsOf(document: PortfolioDocumentInput, published: boolean): DemoFixture['portfolio']['published'] {
  const pick = (items: { slug: string; published: boolean }[] | undefined) =>
    (items ?? []).filter((item) => item.published === published).map((item) => item.slug);
  return { outcomes: pick(document.outcomes), posts: pick(document.posts), pages: pick(document.pages) };
}
