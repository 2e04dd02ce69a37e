// Rendering of a normalized document into every form the API answers: each item as its
// operations return it (assets resolved), page summaries, the profile and the whole published
// portfolio; computed once at import, so reads only select precomputed JSON.
import type { StoredItem, StoredPortfolio } from '../../store/portfolioDocuments.js';
import type {
  Asset,
  Award,
  Credential,
  ExperienceEntry,
  Link,
  OutcomeItem,
  PageBlock,
  PageItem,
  PageSummary,
  PortfolioResponse,
  PostItem,
  ProfileItem,
  Skill,
  Stat,
  Testimonial,
} from '../../store/portfolioShapes.js';
import { listMembers, type ImportAsset, type ImportBlock, type ImportPage, type ListMember, type PortfolioDocument } from './importFormat.js';

/** Every stored form of a normalized document; `updatedAt` is the import time (ms). */
export function renderPortfolio(document: PortfolioDocument, updatedAt: number): StoredPortfolio {
  const assetsById = new Map<string, Asset>(document.assets.map((asset) => [asset.id, renderAsset(asset)]));
  const asset = (id: string): Asset => {
    const found = assetsById.get(id);
    if (!found) throw new Error(`Unresolved asset reference "${id}" (the document was not validated).`);
    return found;
  };
  const optionalAsset = (id: string | null): Asset | null => (id === null ? null : asset(id));

  const profile: ProfileItem = {
    name: document.profile.name,
    headline: document.profile.headline,
    bioSummary: document.profile.bioSummary,
    location: document.profile.location,
    avatar: optionalAsset(document.profile.avatar),
    updatedAt: new Date(updatedAt).toISOString(),
  };

  const renderBlock = (block: ImportBlock): PageBlock => {
    switch (block.type) {
      case 'image':
        return { type: 'image', image: asset(block.image), caption: block.caption };
      case 'gallery':
        return { type: 'gallery', images: block.images.map(asset) };
      default:
        return { ...block };
    }
  };
  const pageSummary = (page: ImportPage): PageSummary => ({
    slug: page.slug,
    title: page.title,
    description: page.description,
  });

  const renderers: { [M in ListMember]: (item: PortfolioDocument[M][number]) => unknown } = {
    outcomes: (outcome): OutcomeItem => ({
      slug: outcome.slug,
      title: outcome.title,
      summary: outcome.summary,
      client: outcome.client,
      metrics: outcome.metrics.map((metric) => ({ ...metric })),
      bodyHtml: outcome.bodyHtml,
      coverImage: optionalAsset(outcome.coverImage),
      tags: [...outcome.tags],
    }),
    posts: (post): PostItem => ({
      slug: post.slug,
      title: post.title,
      excerpt: post.excerpt,
      bodyHtml: post.bodyHtml,
      coverImage: optionalAsset(post.coverImage),
      tags: [...post.tags],
      publishedAt: post.publishedAt,
      updatedAt: post.updatedAt,
    }),
    pages: (page): PageItem => ({ ...pageSummary(page), blocks: page.blocks.map(renderBlock) }),
    experience: (entry): ExperienceEntry => ({
      id: entry.id,
      organization: entry.organization,
      role: entry.role,
      location: entry.location,
      startDate: entry.startDate,
      endDate: entry.endDate,
      summary: entry.summary,
      highlights: [...entry.highlights],
    }),
    skills: (skill): Skill => ({
      id: skill.id,
      name: skill.name,
      category: skill.category,
      level: skill.level,
      tags: [...skill.tags],
    }),
    stats: (stat): Stat => ({
      id: stat.id,
      label: stat.label,
      value: stat.value,
      unit: stat.unit,
      description: stat.description,
    }),
    awards: (award): Award => ({
      id: award.id,
      title: award.title,
      issuer: award.issuer,
      awardedOn: award.awardedOn,
      description: award.description,
      url: award.url,
    }),
    education: (credential): Credential => ({
      id: credential.id,
      kind: credential.kind,
      title: credential.title,
      institution: credential.institution,
      startDate: credential.startDate,
      endDate: credential.endDate,
      url: credential.url,
      description: credential.description,
    }),
    testimonials: (testimonial): Testimonial => ({
      id: testimonial.id,
      quote: testimonial.quote,
      authorName: testimonial.authorName,
      authorRole: testimonial.authorRole,
      authorCompany: testimonial.authorCompany,
      avatar: optionalAsset(testimonial.avatar),
    }),
    links: (link): Link => ({ id: link.id, kind: link.kind, label: link.label, url: link.url }),
  };

  const items: StoredItem[] = [];
  const published: Record<string, unknown[]> = {};
  for (const [member, kind] of listMembers) {
    const list = document[member] as (PortfolioDocument[ListMember][number] & { published: boolean })[];
    const render = renderers[member] as (item: unknown) => unknown;
    published[member] = [];
    list.forEach((item, position) => {
      const rendered = render(item);
      items.push({
        kind,
        position,
        id: 'id' in item ? item.id : null,
        slug: 'slug' in item ? item.slug : null,
        published: item.published,
        source: item,
        rendered,
        summary: member === 'pages' ? pageSummary(item as ImportPage) : null,
      });
      if (item.published) published[member]?.push(rendered);
    });
  }

  return {
    published: document.published,
    profileSource: document.profile,
    profile,
    document: { profile, ...published } as unknown as PortfolioResponse,
    assets: document.assets,
    items,
    updatedAt,
  };
}

function renderAsset(asset: ImportAsset): Asset {
  return {
    id: asset.id,
    url: asset.url,
    altText: asset.altText,
    mimeType: asset.mimeType,
    width: asset.width,
    height: asset.height,
  };
}
