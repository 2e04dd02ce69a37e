// Normalization of a valid import document into what is stored and exported: every default
// filled in, missing ids generated, every HTML member sanitized.
import { defaultRandomBytes, newId, type RandomBytes } from '../../store/ids.js';
import { sanitizeHtml } from '../sanitizeHtml.js';
import { idPrefixes, type BlockInput, type ImportBlock, type PortfolioDocument, type PortfolioDocumentInput } from './importFormat.js';

type IdMember = keyof typeof idPrefixes;
const idMembers = Object.keys(idPrefixes) as IdMember[];

/**
 * Fills in every default, generates missing ids and sanitizes every HTML field. The result is
 * what is stored and exported. `input` must have passed validatePortfolioDocument().
 */
export function normalizePortfolioDocument(
  input: PortfolioDocumentInput,
  randomBytes: RandomBytes = defaultRandomBytes,
): PortfolioDocument {
  const usedIds = new Map<IdMember, Set<string>>(
    idMembers.map((member) => [
      member,
      new Set(((input[member] ?? []) as { id?: string }[]).flatMap((item) => (item.id ? [item.id] : []))),
    ]),
  );
  const idFor = (member: IdMember, given: string | undefined): string => {
    if (given) return given;
    const used = usedIds.get(member) ?? new Set<string>();
    let id: string;
    do id = newId(idPrefixes[member], randomBytes);
    while (used.has(id));
    used.add(id);
    return id;
  };

  return {
    formatVersion: 1,
    published: input.published,
    profile: {
      name: input.profile.name,
      headline: input.profile.headline,
      bioSummary: input.profile.bioSummary,
      location: input.profile.location ?? null,
      avatar: input.profile.avatar ?? null,
    },
    assets: (input.assets ?? []).map((asset) => ({
      id: asset.id,
      url: asset.url,
      altText: asset.altText,
      mimeType: asset.mimeType,
      width: asset.width ?? null,
      height: asset.height ?? null,
    })),
    outcomes: (input.outcomes ?? []).map((outcome) => ({
      slug: outcome.slug,
      published: outcome.published,
      title: outcome.title,
      summary: outcome.summary,
      client: outcome.client ?? null,
      metrics: (outcome.metrics ?? []).map((metric) => ({ label: metric.label, value: metric.value })),
      bodyHtml: sanitizeHtml(outcome.bodyHtml),
      coverImage: outcome.coverImage ?? null,
      tags: [...(outcome.tags ?? [])],
    })),
    posts: (input.posts ?? []).map((post) => ({
      slug: post.slug,
      published: post.published,
      title: post.title,
      excerpt: post.excerpt,
      bodyHtml: sanitizeHtml(post.bodyHtml),
      coverImage: post.coverImage ?? null,
      tags: [...(post.tags ?? [])],
      publishedAt: post.publishedAt,
      updatedAt: post.updatedAt ?? post.publishedAt,
    })),
    pages: (input.pages ?? []).map((page) => ({
      slug: page.slug,
      published: page.published,
      title: page.title,
      description: page.description ?? '',
      blocks: page.blocks.map(normalizeBlock),
    })),
    experience: (input.experience ?? []).map((entry) => ({
      id: idFor('experience', entry.id),
      published: entry.published,
      organization: entry.organization,
      role: entry.role,
      location: entry.location ?? null,
      startDate: entry.startDate,
      endDate: entry.endDate ?? null,
      summary: entry.summary,
      highlights: [...(entry.highlights ?? [])],
    })),
    skills: (input.skills ?? []).map((skill) => ({
      id: idFor('skills', skill.id),
      published: skill.published,
      name: skill.name,
      category: skill.category ?? null,
      level: skill.level ?? null,
      tags: [...(skill.tags ?? [])],
    })),
    stats: (input.stats ?? []).map((stat) => ({
      id: idFor('stats', stat.id),
      published: stat.published,
      label: stat.label,
      value: stat.value,
      unit: stat.unit ?? null,
      description: stat.description ?? null,
    })),
    awards: (input.awards ?? []).map((award) => ({
      id: idFor('awards', award.id),
      published: award.published,
      title: award.title,
      issuer: award.issuer,
      awardedOn: award.awardedOn,
      description: award.description ?? null,
      url: award.url ?? null,
    })),
    education: (input.education ?? []).map((credential) => ({
      id: idFor('education', credential.id),
      published: credential.published,
      kind: credential.kind,
      title: credential.title,
      institution: credential.institution,
      startDate: credential.startDate ?? null,
      endDate: credential.endDate ?? null,
      url: credential.url ?? null,
      description: credential.description ?? null,
    })),
    testimonials: (input.testimonials ?? []).map((testimonial) => ({
      id: idFor('testimonials', testimonial.id),
      published: testimonial.published,
      quote: testimonial.quote,
      authorName: testimonial.authorName,
      authorRole: testimonial.authorRole ?? null,
      authorCompany: testimonial.authorCompany ?? null,
      avatar: testimonial.avatar ?? null,
    })),
    links: (input.links ?? []).map((link) => ({
      id: idFor('links', link.id),
      published: link.published,
      kind: link.kind,
      label: link.label,
      url: link.url,
    })),
  };
}

function normalizeBlock(block: BlockInput): ImportBlock {
  switch (block.type) {
    case 'heading':
      return { type: 'heading', level: block.level, text: block.text };
    case 'richText':
      return { type: 'richText', html: sanitizeHtml(block.html) };
    case 'image':
      return { type: 'image', image: block.image, caption: block.caption ?? null };
    case 'gallery':
      return { type: 'gallery', images: [...block.images] };
    case 'quote':
      return { type: 'quote', text: block.text, attribution: block.attribution ?? null };
    case 'callToAction':
      return { type: 'callToAction', label: block.label, url: block.url };
  }
}
