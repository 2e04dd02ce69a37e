// Validation of an import document: the schema (specs/portfolio/import-format.schema.json), worded
// by the pipeline's one translation of Ajv errors, then the rules a schema cannot express (unique
// slugs and ids, asset references, date order, address schemes, no markup in plain text). Every
// problem of a document comes out at once, in document order; nothing is written.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { createAjv2020 } from '../../contract/ajv.js';
import { escapePointerToken } from '../../contract/jsonPointer.js';
import { validationIssues } from '../../contract/validationIssues.js';
import { projectFile } from '../../projectFiles.js';
import { idPrefixes, listMembers } from './importFormat.js';

export const importFormatSchemaPath = pathToFileURL(projectFile('specs/portfolio/import-format.schema.json'));

/** One reason a document was refused: a JSON pointer into the document and what is wrong there. */
export interface ImportProblem {
  path: string;
  message: string;
}

/** Thrown when a document fails validation; nothing has been written. */
export class PortfolioImportError extends Error {
  override readonly name = 'PortfolioImportError';

  constructor(readonly details: ImportProblem[]) {
    super(
      `The portfolio document is invalid (${details.length} ${details.length === 1 ? 'problem' : 'problems'}): ` +
        details
          .slice(0, 5)
          .map((problem) => `${problem.path || '/'} ${problem.message}`)
          .join('; ') +
        (details.length > 5 ? '; …' : ''),
    );
  }
}

const slugMembers = ['outcomes', 'posts', 'pages'] as const;

type IdMember = keyof typeof idPrefixes;
const idMembers = Object.keys(idPrefixes) as IdMember[];

let compiledValidator: ValidateFunction | undefined;

function schemaValidator(): ValidateFunction {
  if (!compiledValidator) {
    const schema = JSON.parse(readFileSync(importFormatSchemaPath, 'utf8')) as Record<string, unknown>;
    // Strict here: the import schema is ours alone, so an unknown keyword in it is a mistake.
    const ajv = createAjv2020({ allErrors: true, strict: true, discriminator: true });
    compiledValidator = ajv.compile(schema);
  }
  return compiledValidator;
}


const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function recordsAt(document: Record<string, unknown>, member: string): [number, Record<string, unknown>][] {
  const list = document[member];
  if (!Array.isArray(list)) return [];
  return list.flatMap((item, index): [number, Record<string, unknown>][] => (isRecord(item) ? [[index, item]] : []));
}

const schemePattern = /^([A-Za-z][A-Za-z0-9+.-]*):/;

/** Why `value` is not an acceptable address, or undefined. Syntax is the schema's `uri` format's job. */
function urlProblem(value: unknown, allowMailto: boolean): string | undefined {
  if (typeof value !== 'string') return undefined;
  const allowed = allowMailto ? 'http, https or mailto' : 'http or https';
  const scheme = schemePattern.exec(value)?.[1]?.toLowerCase();
  if (scheme === undefined) return `must be an absolute ${allowed} address`;
  if (scheme === 'http' || scheme === 'https') {
    return /^https?:\/\/[^/?#\s]+/i.test(value) && URL.canParse(value)
      ? undefined
      : `must be an absolute ${scheme} address with a host`;
  }
  if (scheme === 'mailto' && allowMailto) return value.length > 'mailto:'.length ? undefined : 'must name an address';
  return `uses the scheme "${scheme}"; only ${allowed} addresses are allowed`;
}

/** The rules the JSON Schema cannot express. Works on any input, so all problems come out at once. */
function semanticProblems(document: unknown): ImportProblem[] {
  if (!isRecord(document)) return [];
  const problems: ImportProblem[] = [];

  const assetIds = new Set<string>();
  const firstAssetAt = new Map<string, number>();
  for (const [index, asset] of recordsAt(document, 'assets')) {
    if (typeof asset.id === 'string') {
      const first = firstAssetAt.get(asset.id);
      if (first !== undefined) {
        problems.push({ path: `/assets/${index}/id`, message: `duplicates the id of /assets/${first}` });
      } else firstAssetAt.set(asset.id, index);
      assetIds.add(asset.id);
    }
    const problem = urlProblem(asset.url, false);
    if (problem) problems.push({ path: `/assets/${index}/url`, message: problem });
  }

  const checkAssetReference = (value: unknown, path: string): void => {
    if (typeof value === 'string' && !assetIds.has(value)) {
      problems.push({ path, message: `refers to the asset "${value}", which is not in /assets` });
    }
  };
  const checkUnique = (member: string, key: 'slug' | 'id'): void => {
    const firstAt = new Map<string, number>();
    for (const [index, item] of recordsAt(document, member)) {
      const value = item[key];
      if (typeof value !== 'string') continue;
      const first = firstAt.get(value);
      if (first !== undefined) {
        problems.push({ path: `/${member}/${index}/${key}`, message: `duplicates the ${key} of /${member}/${first}` });
      } else firstAt.set(value, index);
    }
  };
  const checkDateOrder = (member: string, item: Record<string, unknown>, index: number): void => {
    const { startDate, endDate } = item;
    if (typeof startDate === 'string' && typeof endDate === 'string' && endDate < startDate) {
      problems.push({ path: `/${member}/${index}/endDate`, message: 'must not be before startDate' });
    }
  };
  const checkUrl = (value: unknown, path: string): void => {
    const problem = urlProblem(value, true);
    if (problem) problems.push({ path, message: problem });
  };

  for (const member of slugMembers) checkUnique(member, 'slug');
  for (const member of idMembers) checkUnique(member, 'id');

  if (isRecord(document.profile)) checkAssetReference(document.profile.avatar, '/profile/avatar');
  for (const [index, outcome] of recordsAt(document, 'outcomes')) {
    checkAssetReference(outcome.coverImage, `/outcomes/${index}/coverImage`);
  }
  for (const [index, post] of recordsAt(document, 'posts')) {
    checkAssetReference(post.coverImage, `/posts/${index}/coverImage`);
  }
  for (const [pageIndex, page] of recordsAt(document, 'pages')) {
    for (const [blockIndex, block] of recordsAt(page, 'blocks')) {
      const at = `/pages/${pageIndex}/blocks/${blockIndex}`;
      if (block.type === 'image') checkAssetReference(block.image, `${at}/image`);
      if (block.type === 'gallery' && Array.isArray(block.images)) {
        block.images.forEach((image, imageIndex) => checkAssetReference(image, `${at}/images/${imageIndex}`));
      }
      if (block.type === 'callToAction') checkUrl(block.url, `${at}/url`);
    }
  }
  for (const [index, entry] of recordsAt(document, 'experience')) checkDateOrder('experience', entry, index);
  for (const [index, award] of recordsAt(document, 'awards')) checkUrl(award.url, `/awards/${index}/url`);
  for (const [index, credential] of recordsAt(document, 'education')) {
    checkUrl(credential.url, `/education/${index}/url`);
    checkDateOrder('education', credential, index);
  }
  for (const [index, testimonial] of recordsAt(document, 'testimonials')) {
    checkAssetReference(testimonial.avatar, `/testimonials/${index}/avatar`);
  }
  for (const [index, link] of recordsAt(document, 'links')) checkUrl(link.url, `/links/${index}/url`);
  problems.push(...markupInPlainText(document, ''));
  return problems;
}

/** The members that hold HTML, sanitized when imported; every other string is plain text. */
const htmlMembers = new Set(['bodyHtml', 'html']);

/**
 * What a browser would read as the start of a tag, a comment or a declaration: `<` followed by a
 * letter, `/`, `!` or `?`. A lone `<` (as in `a < b` or `<3`) is text.
 */
const tagStart = /<[A-Za-z!/?]/;

/**
 * Plain-text members are shown as text by clients, and some will put them into HTML as they are:
 * markup in them is refused, so nothing stored can become a tag, an event handler or a script.
 */
function markupInPlainText(value: unknown, path: string): ImportProblem[] {
  if (typeof value === 'string') {
    return tagStart.test(value)
      ? [{ path, message: 'is plain text: markup (a "<" that starts a tag) is not allowed; put formatted text in a richText block or a bodyHtml member, which are sanitized' }]
      : [];
  }
  if (Array.isArray(value)) return value.flatMap((item, index) => markupInPlainText(item, `${path}/${index}`));
  if (!isRecord(value)) return [];
  return Object.entries(value).flatMap(([member, item]) =>
    htmlMembers.has(member) && typeof item === 'string' ? [] : markupInPlainText(item, `${path}/${escapePointerToken(member)}`),
  );
}

/** Every problem of a document (schema and semantic), in document order; empty when it is valid. */
export function validatePortfolioDocument(document: unknown): ImportProblem[] {
  const validate = schemaValidator();
  // The block-level `type` schema (required, string, enum) already reports everything the
  // discriminator would, so its errors would only repeat them.
  const schemaProblems = validate(document)
    ? []
    : validationIssues(
        (validate.errors ?? []).filter((error) => error.keyword !== 'discriminator'),
        'body',
      ).map(({ path, message }) => ({ path, message }));

  const seen = new Set<string>();
  const problems: ImportProblem[] = [];
  for (const problem of [...schemaProblems, ...semanticProblems(document)]) {
    const key = `${problem.path}\u0000${problem.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      problems.push(problem);
    }
  }
  return problems.sort((a, b) => comparePaths(a.path, b.path));
}

/** The document's top-level members in the order the format lists them. */
const memberOrder = ['formatVersion', 'published', 'profile', 'assets', ...listMembers.map(([member]) => member)];

/**
 * Orders JSON pointers by where they point: top-level members in format order, array elements by
 * index, other members by name. Deterministic, so the same document always reports the same list.
 */
function comparePaths(a: string, b: string): number {
  const left = a.split('/').slice(1);
  const right = b.split('/').slice(1);
  for (let index = 0; index < Math.min(left.length, right.length); index += 1) {
    const x = left[index] ?? '';
    const y = right[index] ?? '';
    if (x === y) continue;
    if (/^\d+$/.test(x) && /^\d+$/.test(y)) return Number(x) - Number(y);
    if (index === 0) {
      const order = (member: string) => (memberOrder.includes(member) ? memberOrder.indexOf(member) : memberOrder.length);
      if (order(x) !== order(y)) return order(x) - order(y);
    }
    return x < y ? -1 : 1;
  }
  return left.length - right.length;
}
