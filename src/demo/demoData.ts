// The demo data set: three tenants with deterministic ids and content, and fresh API keys on
// every load. The server loads it into an empty database at start-up (DEMO_DATA=on); the admin
// CLI's `demo` command loads it on demand; tests call loadDemoData() directly.
import type BetterSqlite3 from 'better-sqlite3';
import type { PortfolioDocumentInput } from '../portfolio/importFormat.js';
import { importPortfolio } from '../portfolio/portfolioImport.js';
import { createApiKeyStore } from '../store/apiKeys.js';
import { createTenantStore } from '../store/tenants.js';
import { avaMorenoPortfolio } from './avaMoreno.js';
import { jonasFeldPortfolio, otherTenantOnlyPostSlug, priyaRamanPortfolio } from './otherPortfolios.js';

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
 * never duplicating, their content; `updatedAt` moves to now). Every call issues new keys; keys
 * from earlier calls stay valid. Other tenants are never touched.
 */
export function loadDemoData(db: BetterSqlite3.Database, now: () => number = Date.now): DemoFixture {
  const tenantStore = createTenantStore(db, { now });
  const keyStore = createApiKeyStore(db, { now });

  return db.transaction((): DemoFixture => {
    for (const tenant of Object.values(demoTenants)) {
      if (!tenantStore.getTenant(tenant.id)) tenantStore.createTenant(tenant.name, { id: tenant.id });
      importPortfolio(db, tenant.id, tenant.document, now);
    }
    const mainId = demoTenants.main.id;
    const revoked = keyStore.createApiKey({ tenantId: mainId });
    keyStore.revokeApiKey(revoked.id);

    return {
      portfolio: {
        tenantId: mainId,
        apiKey: keyStore.createApiKey({ tenantId: mainId }).key,
        revokedApiKey: revoked.key,
        expiredApiKey: keyStore.createApiKey({ tenantId: mainId, expiresAt: now() - day }).key,
        unpublishedApiKey: keyStore.createApiKey({ tenantId: demoTenants.unpublished.id }).key,
        otherTenantId: demoTenants.other.id,
        otherTenantApiKey: keyStore.createApiKey({ tenantId: demoTenants.other.id }).key,
        published: slugsOf(avaMorenoPortfolio, true),
        unpublished: slugsOf(avaMorenoPortfolio, false),
        otherTenantOnly: { posts: [otherTenantOnlyPostSlug] },
      },
    };
  }).immediate();
}

function slugsOf(document: PortfolioDocumentInput, published: boolean): DemoFixture['portfolio']['published'] {
  const pick = (items: { slug: string; published: boolean }[] | undefined) =>
    (items ?? []).filter((item) => item.published === published).map((item) => item.slug);
  return { outcomes: pick(document.outcomes), posts: pick(document.posts), pages: pick(document.pages) };
}
