// TypeScript form of specs/portfolio/import-format.schema.json after normalization: every
// optional member present (defaults filled in, ids generated, HTML sanitized). This is what is
// stored as source JSON and exactly what `portfolio export` prints.
import type { PortfolioItemKind } from '../../store/portfolioShapes.js';

export type AssetId = string;

export interface ImportAsset {
  id: AssetId;
  url: string;
  altText: string;
  mimeType: string;
  width: number | null;
  height: number | null;
}

export interface ImportProfile {
  name: string;
  headline: string;
  bioSummary: string;
  location: string | null;
  avatar: AssetId | null;
}

export interface ImportOutcome {
  slug: string;
  published: boolean;
  title: string;
  summary: string;
  client: string | null;
  metrics: { label: string; value: string }[];
  bodyHtml: string;
  coverImage: AssetId | null;
  tags: string[];
}

export interface ImportPost {
  slug: string;
  published: boolean;
  title: string;
  excerpt: string;
  bodyHtml: string;
  coverImage: AssetId | null;
  tags: string[];
  publishedAt: string;
  updatedAt: string;
}

export type ImportBlock =
  | { type: 'heading'; level: number; text: string }
  | { type: 'richText'; html: string }
  | { type: 'image'; image: AssetId; caption: string | null }
  | { type: 'gallery'; images: AssetId[] }
  | { type: 'quote'; text: string; attribution: string | null }
  | { type: 'callToAction'; label: string; url: string };

export interface ImportPage {
  slug: string;
  published: boolean;
  title: string;
  description: string;
  blocks: ImportBlock[];
}

export interface ImportExperience {
  id: string;
  published: boolean;
  organization: string;
  role: string;
  location: string | null;
  startDate: string;
  endDate: string | null;
  summary: string;
  highlights: string[];
}

export interface ImportSkill {
  id: string;
  published: boolean;
  name: string;
  category: string | null;
  level: 'beginner' | 'intermediate' | 'advanced' | 'expert' | null;
  tags: string[];
}

export interface ImportStat {
  id: string;
  published: boolean;
  label: string;
  value: number;
  unit: string | null;
  description: string | null;
}

export interface ImportAward {
  id: string;
  published: boolean;
  title: string;
  issuer: string;
  awardedOn: string;
  description: string | null;
  url: string | null;
}

export interface ImportCredential {
  id: string;
  published: boolean;
  kind: 'education' | 'certification';
  title: string;
  institution: string;
  startDate: string | null;
  endDate: string | null;
  url: string | null;
  description: string | null;
}

export interface ImportTestimonial {
  id: string;
  published: boolean;
  quote: string;
  authorName: string;
  authorRole: string | null;
  authorCompany: string | null;
  avatar: AssetId | null;
}

export interface ImportLink {
  id: string;
  published: boolean;
  kind: 'website' | 'email' | 'github' | 'linkedin' | 'x' | 'mastodon' | 'youtube' | 'dribbble' | 'behance' | 'other';
  label: string;
  url: string;
}

/** A whole portfolio in import form, normalized. */
export interface PortfolioDocument {
  formatVersion: 1;
  published: boolean;
  profile: ImportProfile;
  assets: ImportAsset[];
  outcomes: ImportOutcome[];
  posts: ImportPost[];
  pages: ImportPage[];
  experience: ImportExperience[];
  skills: ImportSkill[];
  stats: ImportStat[];
  awards: ImportAward[];
  education: ImportCredential[];
  testimonials: ImportTestimonial[];
  links: ImportLink[];
}

/**
 * The same document as a person writes it: optional members may be left out and list-only
 * items may omit their `id`. (The JSON Schema is the authority; this type is for callers that
 * build documents in code, such as the demo data set.)
 */
export interface PortfolioDocumentInput {
  $schema?: string;
  formatVersion: 1;
  published: boolean;
  profile: Optional<ImportProfile, 'location' | 'avatar'>;
  assets?: Optional<ImportAsset, 'width' | 'height'>[];
  outcomes?: Optional<ImportOutcome, 'client' | 'metrics' | 'coverImage' | 'tags'>[];
  posts?: Optional<ImportPost, 'coverImage' | 'tags' | 'updatedAt'>[];
  pages?: (Optional<ImportPage, 'description' | 'blocks'> & { blocks: BlockInput[] })[];
  experience?: Optional<ImportExperience, 'id' | 'location' | 'endDate' | 'highlights'>[];
  skills?: Optional<ImportSkill, 'id' | 'category' | 'level' | 'tags'>[];
  stats?: Optional<ImportStat, 'id' | 'unit' | 'description'>[];
  awards?: Optional<ImportAward, 'id' | 'description' | 'url'>[];
  education?: Optional<ImportCredential, 'id' | 'startDate' | 'endDate' | 'url' | 'description'>[];
  testimonials?: Optional<ImportTestimonial, 'id' | 'authorRole' | 'authorCompany' | 'avatar'>[];
  links?: Optional<ImportLink, 'id'>[];
}

export type BlockInput =
  | Extract<ImportBlock, { type: 'heading' | 'richText' | 'gallery' | 'callToAction' }>
  | Optional<Extract<ImportBlock, { type: 'image' }>, 'caption'>
  | Optional<Extract<ImportBlock, { type: 'quote' }>, 'attribution'>;

type Optional<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;

/** The document's list members, in document order, with the stored kind of their items. */
export const listMembers = [
  ['outcomes', 'outcome'],
  ['posts', 'post'],
  ['pages', 'page'],
  ['experience', 'experience'],
  ['skills', 'skill'],
  ['stats', 'stat'],
  ['awards', 'award'],
  ['education', 'credential'],
  ['testimonials', 'testimonial'],
  ['links', 'link'],
] as const satisfies readonly (readonly [keyof PortfolioDocument, PortfolioItemKind])[];

export type ListMember = (typeof listMembers)[number][0];

/** The id prefix of each list-only member, as the contract's schemas demand. */
export const idPrefixes = {
  experience: 'exp',
  skills: 'skl',
  stats: 'sta',
  awards: 'awd',
  education: 'crd',
  testimonials: 'tst',
  links: 'lnk',
} as const;
