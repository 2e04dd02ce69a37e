// Generated from specs/portfolio by npm run build:contract — do not edit.

/** Every operation of the API, by operationId. */
export type OperationId = 'getPortfolio' | 'getProfile' | 'getOutcomes' | 'getOutcomesBySlug' | 'getPosts' | 'getPostsBySlug' | 'getPages' | 'getPagesBySlug' | 'getExperience' | 'getSkills' | 'getStats' | 'getAwards' | 'getEducation' | 'getTestimonials' | 'getLinks' | 'getOpenapiJson' | 'getOpenapiYaml' | 'getPostmanJson' | 'getChangelogJson' | 'getReferencePage';

/** Operations declared with `security: []`: their handlers get no caller. */
export type PublicOperationId = 'getOpenapiJson' | 'getOpenapiYaml' | 'getPostmanJson' | 'getChangelogJson' | 'getReferencePage';

/** Every operationId, in the order of the spec. */
export const operationIds = [
  'getPortfolio',
  'getProfile',
  'getOutcomes',
  'getOutcomesBySlug',
  'getPosts',
  'getPostsBySlug',
  'getPages',
  'getPagesBySlug',
  'getExperience',
  'getSkills',
  'getStats',
  'getAwards',
  'getEducation',
  'getTestimonials',
  'getLinks',
  'getOpenapiJson',
  'getOpenapiYaml',
  'getPostmanJson',
  'getChangelogJson',
  'getReferencePage',
] as const;

/** `x-ratelimit-cost` of the operations that declare one (every other call counts 1 unit): expensive calls, run apart with a concurrency cap per workspace. */
export const rateLimitCosts: Readonly<Partial<Record<OperationId, number>>> = {};

/** The instance path of what each create operation makes (it declares `Location` on its 201): the handler fills in the id. */
export const createdLocations: Readonly<Partial<Record<OperationId, string>>> = {};

/** Every scope the security schemes declare (`x-scopes`, OAuth 2.0 flows' `scopes`). */
export const scopeCatalogue = [
] as const;

export type Scope = (typeof scopeCatalogue)[number];

/** What each scope allows, as the security schemes word it (the OAuth consent page shows it). */
export const scopeDescriptions: Readonly<Record<Scope, string>> = {};

/** The event types of the `webhooks` section. */
export const eventTypes = [
] as const;

export type EventType = (typeof eventTypes)[number];

/** The fields each `sort` parameter component allows, in the order the spec lists them. */
export const sortFields = {} as const;

/** The string enums of the component schemas: `Schema` for an enum schema, `Schema.member` for an enum member. */
export const enumValues = {
  "Credential.kind": [
    "education",
    "certification"
  ],
  "Link.kind": [
    "website",
    "email",
    "github",
    "linkedin",
    "x",
    "mastodon",
    "youtube",
    "dribbble",
    "behance",
    "other"
  ]
} as const;

/** `maxLength` of the string members of the component schemas, by schema and member. */
export const maxLengths = {} as const;
